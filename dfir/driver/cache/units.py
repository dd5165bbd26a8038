"""Unit files `<dir>/<key>/<hex>.om`: one compiled process point, or one compiled `df.graph`.

A unit file is an `.om` flow container (so every byte is covered by its checksums) holding what
a later compile needs to reuse the part without importing it, running its passes or lowering
it again. Its `CACHE_MANIFEST` is JSON `{"format": 3, "kind": ..., "fingerprint": <key>, ...}`,
`fingerprint` being the key it is filed under; the rest depends on the kind:

- `"process point"` (filed under the point's fingerprint): `"plan"`, the unit plan
  `lowering.plan.lower_unit` returns; `"ops"`, the symbols of the top-level ops whose printed
  text follows (the point and its `ge.graph`); `"variables"`, those of its `ge.graph`s as
  `.rdcpkt` files list them. Then one `UDF_PAYLOAD` per payload, one `SO_BINS` per library and
  one `GE_EXECUTABLE` per executable of the plan, in order, `WEIGHTS_DATA` when it has weights
  (so a GE graph taken from the cache is never compiled again), and one `IR_TEXT` per op of `ops`,
  as the final IR prints it.
- `"graph"` (filed under its flow key, `dfir.frontend.cache_keys`): `"skeleton"`, the graph's part
  of the plan (`lowering.plan.graph_skeleton`); `"symbol"`; `"structure"` and `"references"`,
  what its fingerprint hashes besides the process points' keys
  (`dfir.passes.fingerprint_subgraphs.Structure`); `"printed_fingerprint"`, the fingerprint its
  text was printed with (a graph whose process points changed has another one there, and
  nothing else changes). Then one `IR_TEXT`: the `df.graph` as the final IR prints it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from dfir.core.errors import GeError
from dfir.driver.cache.checked_om import CheckedOm, read_checked_om
from dfir.lowering.om_writer import Chunks, write_om
from dfir.lowering.plan import LoweredGraph, Skeleton, UnitPlan, read_skeleton
from dfir.om.schema import PartitionType
from dfir.passes.fingerprint_subgraphs import Structure

__all__ = ["UNIT_FORMAT", "CachedGraph", "CachedUnit", "read_unit", "unit_bytes"]

UNIT_FORMAT = 3  # 3: units hold the IREE executables of their GE graphs


@dataclass
class CachedUnit:
    """A compiled process point: its lowered unit, the printed text of its top-level ops, and
    the variables of its `ge.graph`s."""

    lowered: LoweredGraph
    texts: dict[str, str]
    variables: list[dict] = field(default_factory=list)


@dataclass
class CachedGraph:
    """A compiled `df.graph`: its plan skeleton, symbol and printed text, the fingerprint that
    text holds, and the structure its fingerprint hashes."""

    skeleton: Skeleton
    symbol: str
    text: str
    printed_fingerprint: str
    structure: Structure

    def text_with(self, fingerprint: str) -> str:
        """The graph's text with its fingerprint `fingerprint`."""
        return self.text.replace(self.printed_fingerprint, fingerprint)


def unit_bytes(key: str, unit: CachedUnit | CachedGraph) -> bytes:
    """The unit file for `unit`, filed under `key`."""
    if isinstance(unit, CachedGraph):
        manifest = {"kind": "graph", "skeleton": unit.skeleton.to_json(), "symbol": unit.symbol,
                    "printed_fingerprint": unit.printed_fingerprint, "structure": unit.structure.digest,
                    "references": list(unit.structure.references)}
        return _unit_om(key, manifest, [(PartitionType.IR_TEXT, unit.text.encode())])
    lowered = unit.lowered
    manifest = {"kind": "process point", "plan": lowered.plan.to_json(), "ops": list(unit.texts),
                "variables": unit.variables}
    partitions = [(PartitionType.UDF_PAYLOAD, payload) for payload in lowered.udf_payloads]
    partitions += [(PartitionType.SO_BINS, library) for library in lowered.so_bins]
    partitions += [(PartitionType.GE_EXECUTABLE, vmfb) for vmfb in lowered.executables]
    if lowered.weights:
        partitions.append((PartitionType.WEIGHTS_DATA, lowered.weights))
    partitions += [(PartitionType.IR_TEXT, text.encode()) for text in unit.texts.values()]
    return _unit_om(key, manifest, partitions)


def read_unit(data: bytes, key: str) -> CachedUnit | CachedGraph:
    """The unit in `data`, which must be a valid unit file filed under `key`; a GeError says
    what is wrong otherwise (a truncated or corrupted file fails its checksums)."""
    om = read_checked_om(data)
    try:
        manifest = json.loads(bytes(om.partition(PartitionType.CACHE_MANIFEST)))
    except ValueError as error:
        raise GeError(f"the subgraph manifest is not JSON: {error}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != UNIT_FORMAT:
        raise GeError(f"not a subgraph cache file of format {UNIT_FORMAT}")
    if manifest.get("fingerprint") != key:
        raise GeError(f"the file holds fingerprint {manifest.get('fingerprint')}, expected {key}")
    kind = manifest.get("kind")
    if kind not in ("process point", "graph"):
        raise GeError(f"the subgraph manifest has unknown kind {kind!r}")
    texts = [str(text, "utf-8") for text in om.partitions_of(PartitionType.IR_TEXT)]
    try:
        return _graph(manifest, texts) if kind == "graph" else _point(manifest, texts, om)
    except (KeyError, TypeError):
        raise GeError(f"the manifest of this {kind} unit is malformed") from None


def _unit_om(key: str, manifest: dict, partitions: list) -> bytes:
    document = {"format": UNIT_FORMAT, "fingerprint": key, **manifest}
    head = [(PartitionType.CACHE_MANIFEST, json.dumps(document, sort_keys=True).encode())]
    return write_om([head + partitions], name="subgraph")


def _point(manifest: dict, texts: list[str], om: CheckedOm) -> CachedUnit:
    ops, plan, variables = manifest["ops"], manifest["plan"], manifest["variables"]
    if not (isinstance(ops, list) and isinstance(plan, dict) and isinstance(variables, list)):
        raise TypeError("malformed")
    if len(texts) != len(ops):
        raise GeError(f"the file lists {len(ops)} ops but holds {len(texts)} texts")
    weights = om.partitions_of(PartitionType.WEIGHTS_DATA)
    lowered = LoweredGraph(
        plan=UnitPlan.from_json(plan),
        udf_payloads=[bytes(p) for p in om.partitions_of(PartitionType.UDF_PAYLOAD)],
        so_bins=[bytes(p) for p in om.partitions_of(PartitionType.SO_BINS)],
        weights=Chunks([bytes(weights[0])] if weights else []),
        executables=[bytes(p) for p in om.partitions_of(PartitionType.GE_EXECUTABLE)])
    return CachedUnit(lowered, dict(zip(ops, texts)), variables)


def _graph(manifest: dict, texts: list[str]) -> CachedGraph:
    if len(texts) != 1:
        raise GeError(f"a graph unit holds one text, this one {len(texts)}")
    strings = [manifest["symbol"], manifest["printed_fingerprint"], manifest["structure"], *manifest["references"]]
    if not isinstance(manifest["skeleton"], dict) or not all(isinstance(s, str) for s in strings):
        raise TypeError("malformed")
    structure = Structure(manifest["structure"], tuple(manifest["references"]))
    if texts[0].count(manifest["printed_fingerprint"]) != 1:
        raise GeError("the graph's text does not hold its printed fingerprint exactly once")
    return CachedGraph(read_skeleton(manifest["skeleton"]), manifest["symbol"], texts[0],
                       manifest["printed_fingerprint"], structure)
