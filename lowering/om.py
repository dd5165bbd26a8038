"""Serialize a lowered graph into `.om` bytes: plan, UDF payloads, weights and the final IR text."""
from __future__ import annotations

from dfir.lowering.om_writer import write_om
from dfir.lowering.plan import LoweredGraph
from dfir.om.schema import ModelType, PartitionType


def om_bytes(lowered: LoweredGraph, ir_text: str, *, resource_config: bytes | None = None,
             cache_manifest: bytes | None = None) -> bytes:
    """One flow model: FLOW_MODEL (plan), UDF_PAYLOAD per UDF, SO_BINS per C++ UDF library,
    GE_EXECUTABLE per distinct executable of the compiled GE graphs, WEIGHTS_DATA if any,
    RESOURCE_CONFIG (the resource config compiled for) and CACHE_MANIFEST (the compile cache's
    fingerprints) when given, IR_TEXT."""
    partitions = [(PartitionType.FLOW_MODEL, lowered.plan_bytes())]
    partitions += [(PartitionType.UDF_PAYLOAD, payload) for payload in lowered.udf_payloads]
    partitions += [(PartitionType.SO_BINS, library) for library in lowered.so_bins]
    partitions += [(PartitionType.GE_EXECUTABLE, vmfb) for vmfb in lowered.executables]
    if lowered.weights:
        partitions.append((PartitionType.WEIGHTS_DATA, lowered.weights))
    if resource_config is not None:
        partitions.append((PartitionType.RESOURCE_CONFIG, resource_config))
    if cache_manifest is not None:
        partitions.append((PartitionType.CACHE_MANIFEST, cache_manifest))
    partitions.append((PartitionType.IR_TEXT, ir_text.encode()))
    return write_om([partitions], name=lowered.plan.name, model_type=ModelType.FLOW)
