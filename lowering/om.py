"""Serialize a lowered graph into `.om` bytes: plan, UDF payloads, weights and the final IR text."""
from __future__ import annotations

from dfir.lowering.om_schema import ModelType, PartitionType
from dfir.lowering.om_writer import write_om
from dfir.lowering.plan import LoweredGraph


def om_bytes(lowered: LoweredGraph, ir_text: str) -> bytes:
    """One flow model: FLOW_MODEL (plan), UDF_PAYLOAD per UDF, WEIGHTS_DATA if any, IR_TEXT."""
    partitions = [(PartitionType.FLOW_MODEL, lowered.plan_bytes())]
    partitions += [(PartitionType.UDF_PAYLOAD, payload) for payload in lowered.udf_payloads]
    if lowered.weights:
        partitions.append((PartitionType.WEIGHTS_DATA, bytes(lowered.weights)))
    partitions.append((PartitionType.IR_TEXT, ir_text.encode()))
    return write_om([partitions], name=lowered.plan["name"], model_type=ModelType.FLOW)
