"""`dfir.load`: validate an `.om` (natively), its signature when keys are trusted
(`dfir.om.signature`) and its plans (`dfir.om.plan`), then build runtime models.

Nothing here imports the compiler or xDSL (`tests/runtime/test_runtime_imports.py`): a process
that loads and runs `.om` files imports the runtime only."""
from __future__ import annotations

import os
from typing import Iterator

from dfir.core.backends import ONNXRUNTIME
from dfir.core.collector import batched_collection
from dfir.core.errors import GeError
from dfir.om.keys import trusted_keys as trusted_keys_of
from dfir.om.plan import Plan
from dfir.om.schema import HEADER_SIZE, PartitionType
from dfir.om.signature import verify_signature
from dfir.runtime.driver.model import RuntimeModel
from dfir.runtime.om import read_om


class Bundle:
    """A bundle `.om`: several complete models, addressable by name or position, in bundle order:
    `bundle["mlp"]`, `bundle[0]` (or `bundle.models["mlp"]`, `bundle.models[0]`); `len(bundle)`,
    and iterating gives the names (`name in bundle` asks for one)."""

    def __init__(self, models: dict[str, object]):
        self.models = _Models(models)

    def __getitem__(self, key: str | int):
        return self.models[key]

    def __len__(self) -> int:
        return len(self.models)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.models))

    def __contains__(self, name: object) -> bool:
        return name in self.models

    def __repr__(self) -> str:
        return f"<Bundle of {len(self.models)} models: {', '.join(map(repr, self.models))}>"

    def close(self) -> None:
        for model in self.models.values():
            model.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Models(dict):
    """The models by name, in bundle order; an int key is a position (negative from the end)."""

    def __getitem__(self, key):
        if isinstance(key, int) and not isinstance(key, bool):
            names = list(self.keys())
            if not -len(names) <= key < len(names):
                raise GeError(f"bundle has {len(names)} models, index {key} is out of range")
            key = names[key]
        if key not in self:
            raise GeError(f"bundle has no model named {key!r}; it has {list(self.keys())}")
        return super().__getitem__(key)


def _runtime_model(om_model, label: str, name: str | None = None):
    """The runtime model of one flow model, once its plan is valid (`Plan.from_json`) and matches
    its partitions (`Plan.check_partitions`); GeError naming the model (`label`) and the JSON path
    otherwise. The model is named `name`, by default its plan's name (its full name)."""
    payloads = [p.data for p in om_model.partitions_of(PartitionType.UDF_PAYLOAD)]
    so_bins = [p.data for p in om_model.partitions_of(PartitionType.SO_BINS)]
    executables = [p.data for p in om_model.partitions_of(PartitionType.GE_EXECUTABLE)]
    weights = om_model.partitions_of(PartitionType.WEIGHTS_DATA)
    weights_data = weights[0].data if len(weights) == 1 else None
    configs = om_model.partitions_of(PartitionType.RESOURCE_CONFIG)
    plan_data = om_model.partition(PartitionType.FLOW_MODEL).data
    try:
        if len(weights) > 1:
            raise GeError(f"the model has {len(weights)} WEIGHTS_DATA partitions, expected at most one")
        plan = Plan.from_json(plan_data)
        plan.check_partitions(payloads, so_bins, weights_data, executables=executables)
    except GeError as error:
        raise GeError(f"model {label}: {error.error_message}", "dfir.load", error.context) from None
    _import_for_workers(plan)
    return RuntimeModel(plan, payloads, weights_data, plan.name if name is None else name, so_bins=so_bins,
                        executables=executables, resource_config=configs[0].data if configs else None)


def _import_for_workers(plan: Plan) -> None:
    """Import here, once, what the workers' graph runners import as they build: forked afterwards,
    every worker starts with it (its pages shared), where each would take most of a second."""
    if any(graph.backend == ONNXRUNTIME for graph in plan.ge_graphs):
        import onnxruntime  # noqa: F401  # lazy: a third of a second to import, and only onnxruntime graphs need it


def load(source: str | os.PathLike | bytes | bytearray | memoryview, trusted_keys=None):
    """Load an `.om` (see `_load`), collecting garbage less often while it builds the model."""
    with batched_collection():
        return _load(source, trusted_keys)


def _load(source: str | os.PathLike | bytes | bytearray | memoryview, trusted_keys=None):
    """Load an `.om` from a path or bytes: a runtime model (named after its plan), or a `Bundle`
    for a bundle `.om` (its members named as the bundle names them).

    With trusted keys (`trusted_keys`: a PEM file's path or loaded keys, see
    `dfir.om.keys.trusted_keys`; else the file env DFIR_TRUSTED_KEYS names) a file that is
    unsigned, signed by another key or wrongly signed is a GeError, raised before any UDF
    payload is unpickled or native library loaded. Without them any valid file loads."""
    try:
        trusted = trusted_keys_of(trusted_keys)
    except GeError as error:
        raise GeError(error.error_message, "dfir.load") from None
    om = read_om(source)
    if trusted is not None:
        try:
            verify_signature(om.data[:HEADER_SIZE], om.signature, trusted)
        except GeError as error:
            where = {"file": os.fspath(source)} if isinstance(source, (str, os.PathLike)) else {}
            raise GeError(error.error_message, "dfir.load", where) from None
    if not om.is_bundle:
        return _runtime_model(om.models[0], om.header.name)
    models: dict[str, object] = {}
    try:
        for name, member in om.bundle:
            models[name] = _runtime_model(member.models[0], name, name)
    except BaseException:
        for model in models.values():  # the members loaded before the one that failed
            model.close()
        raise
    return Bundle(models)
