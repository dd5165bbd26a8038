"""Subgraph cache files `<dir>/<key>/<fingerprint hex>.om`: one compiled process point each.

A unit file is an `.om` flow container (so the reader checks every byte against its checksums)
holding what a later compile needs to reuse the process point without running its passes or
lowering it again:

- `CACHE_MANIFEST`: JSON `{"format": 1, "fingerprint": "sha256:...", "plan": <unit plan>,
  "ops": [symbol, ...]}`: the unit's plan as `lowering.plan.lower_unit` returns it, and the
  symbols of the top-level ops whose printed text follows;
- one `UDF_PAYLOAD` per payload and one `SO_BINS` per library of the unit plan, in order;
  `WEIGHTS_DATA` when it has weights;
- one `IR_TEXT` per op of `ops`: the op as the final IR prints it (after every pass).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from dfir.ge.error import GeError
from dfir.lowering.om_schema import PartitionType
from dfir.lowering.om_writer import write_om
from dfir.lowering.plan import LoweredGraph

__all__ = ["UNIT_FORMAT", "CachedUnit", "read_unit", "unit_bytes"]

UNIT_FORMAT = 1


@dataclass
class CachedUnit:
    """A compiled process point: its lowered unit and the printed text of its top-level ops."""

    lowered: LoweredGraph
    texts: dict[str, str]


def unit_bytes(fingerprint: str, unit: CachedUnit) -> bytes:
    """The unit file for `unit`, compiled from a process point with `fingerprint`."""
    manifest = {"format": UNIT_FORMAT, "fingerprint": fingerprint, "plan": unit.lowered.plan,
                "ops": list(unit.texts)}
    partitions = [(PartitionType.CACHE_MANIFEST, json.dumps(manifest, sort_keys=True).encode())]
    partitions += [(PartitionType.UDF_PAYLOAD, payload) for payload in unit.lowered.udf_payloads]
    partitions += [(PartitionType.SO_BINS, library) for library in unit.lowered.so_bins]
    if unit.lowered.weights:
        partitions.append((PartitionType.WEIGHTS_DATA, bytes(unit.lowered.weights)))
    partitions += [(PartitionType.IR_TEXT, text.encode()) for text in unit.texts.values()]
    return write_om([partitions], name="subgraph")


def read_unit(data: bytes, fingerprint: str) -> CachedUnit:
    """The unit in `data`, which must be a valid unit file for `fingerprint`; a GeError says
    what is wrong otherwise (a truncated or corrupted file fails its checksums)."""
    from dfir.runtime.om import read_om
    model = read_om(data).models[0]
    try:
        manifest = json.loads(bytes(model.partition(PartitionType.CACHE_MANIFEST).data))
    except ValueError as error:
        raise GeError(f"the subgraph manifest is not JSON: {error}") from None
    if (not isinstance(manifest, dict) or manifest.get("format") != UNIT_FORMAT
            or not isinstance(manifest.get("plan"), dict) or not isinstance(manifest.get("ops"), list)):
        raise GeError(f"not a subgraph cache file of format {UNIT_FORMAT}")
    if manifest.get("fingerprint") != fingerprint:
        raise GeError(f"the file holds fingerprint {manifest.get('fingerprint')}, expected {fingerprint}")
    texts = [bytes(p.data).decode() for p in model.partitions_of(PartitionType.IR_TEXT)]
    if len(texts) != len(manifest["ops"]):
        raise GeError(f"the file lists {len(manifest['ops'])} ops but holds {len(texts)} texts")
    weights = model.partitions_of(PartitionType.WEIGHTS_DATA)
    lowered = LoweredGraph(
        plan=manifest["plan"],
        udf_payloads=[bytes(p.data) for p in model.partitions_of(PartitionType.UDF_PAYLOAD)],
        so_bins=[bytes(p.data) for p in model.partitions_of(PartitionType.SO_BINS)],
        weights=bytearray(weights[0].data) if weights else bytearray())
    return CachedUnit(lowered, dict(zip(manifest["ops"], texts)))
