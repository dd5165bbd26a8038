"""Crafted `.om` files for the trust tests: UDF payloads that prove they ran when unpickled."""
import hashlib
import json
import pickle

import dfir
import dfir.dataflow as df
from dfir.om.schema import PartitionType
from dfir.lowering.om_writer import write_om
from dfir.runtime.om import read_om


class Trap:
    """Unpickling this creates the file at `path`: proof that a payload ran."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def trap_payload(marker) -> bytes:
    return pickle.dumps(Trap(str(marker)))


def crafted_om(graph: df.FlowGraph, marker) -> bytes:
    """`graph` compiled, its UDF payloads replaced by a `Trap` of `marker`, its plan's digests and
    every checksum recomputed (unsigned): a file every check but the signature passes."""
    om = read_om(dfir.compile(graph).om)
    payload = trap_payload(marker)
    partitions = [(p.type, bytes(p.data)) for p in om.models[0].partitions
                  if p.type != PartitionType.PARTITION_CHECKSUMS]
    plan = json.loads(partitions[0][1])
    for udf in plan["udfs"]:
        udf.update(sha256=hashlib.sha256(payload).hexdigest(), size=len(payload))
    partitions = [(PartitionType.FLOW_MODEL, json.dumps(plan, sort_keys=True, separators=(",", ":")).encode())] + [
        (kind, payload if kind == PartitionType.UDF_PAYLOAD else data) for kind, data in partitions[1:]]
    return write_om([partitions], name="crafted")
