"""`dfir.load`: validate an `.om` (natively) and build runtime models from its plans."""
from __future__ import annotations

import json
import os

from dfir.core.errors import GeError
from dfir.om.schema import PartitionType
from dfir.runtime.model import RuntimeModel
from dfir.runtime.om import read_om


class Bundle:
    """A bundle `.om`: several complete models, addressable by name or index (`models["mlp"]`)."""

    def __init__(self, models: dict[str, object]):
        self.models = _Models(models)

    def close(self) -> None:
        for model in self.models.values():
            model.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Models(dict):
    def __getitem__(self, key):
        if isinstance(key, int):
            names = list(self.keys())
            if not -len(names) <= key < len(names):
                raise GeError(f"bundle has {len(names)} models, index {key} is out of range")
            key = names[key]
        if key not in self:
            raise GeError(f"bundle has no model named {key!r}; it has {list(self.keys())}")
        return super().__getitem__(key)


def _runtime_model(om_model, name: str):
    plan_partition = om_model.partition(PartitionType.FLOW_MODEL)
    try:
        plan = json.loads(bytes(plan_partition.data))
    except (ValueError, UnicodeDecodeError) as error:
        raise GeError(f"model {name}: the execution plan is not valid JSON: {error}", "dfir.load") from error
    payloads = [p.data for p in om_model.partitions_of(PartitionType.UDF_PAYLOAD)]
    so_bins = [p.data for p in om_model.partitions_of(PartitionType.SO_BINS)]
    weights = om_model.partitions_of(PartitionType.WEIGHTS_DATA)
    return RuntimeModel(plan, payloads, weights[0].data if weights else None, name, so_bins=so_bins)


def load(source: str | os.PathLike | bytes | bytearray | memoryview):
    """Load an `.om` from a path or bytes: a runtime model, or a `Bundle` for a bundle `.om`."""
    om = read_om(source)
    if om.bundle:
        return Bundle({name: _runtime_model(model.models[0], name) for name, model in om.bundle})
    return _runtime_model(om.models[0], om.header.name)
