"""`dfir.load`: validate an `.om` (natively), check that a trusted key signed it
(`dfir.om.trust`, `dfir.om.signature`) and its plans (`dfir.om.plan`), then build runtime models.

Nothing here imports the compiler or xDSL (`tests/runtime/test_runtime_imports.py`): a process
that loads and runs `.om` files imports the runtime only."""
from __future__ import annotations

import os
from typing import Iterator

from dfir.core.backends import ONNXRUNTIME
from dfir.core.collector import batched_collection
from dfir.core.errors import GeError
from dfir.om.keys import TrustedKeys
from dfir.om.keys import trusted_keys as trusted_keys_of
from dfir.om.plan import Plan
from dfir.om.schema import HEADER_SIZE, PartitionType
from dfir.om.signature import verify_signature
from dfir.om.trust import TRUST_ENV, default_trusted, trust_mode, warn_untrusted_once
from dfir.runtime.driver.model import RuntimeModel
from dfir.runtime.om import OmFile, read_om

Source = str | os.PathLike | bytes | bytearray | memoryview


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


def load(source: Source, trusted_keys=None, *, trust: str | None = None):
    """Load an `.om` (see `_load`), collecting garbage less often while it builds the model."""
    with batched_collection():
        return _load(source, trusted_keys, trust)


def _load(source: Source, trusted_keys=None, trust: str | None = None):
    """Load an `.om` from a path or bytes: a runtime model (named after its plan), or a `Bundle`
    for a bundle `.om` (its members named as the bundle names them), once `read_trusted` has
    checked who signed it."""
    return models_of(read_trusted(source, trusted_keys, trust))


def read_trusted(source: Source, trusted_keys=None, trust: str | None = None) -> OmFile:
    """The `.om` `source`, read and checked (`read_om`), once a trusted key is found to have
    signed it; nothing in it is unpickled or loaded yet.

    The trusted keys are `trusted_keys` (a PEM file's path or loaded keys, see
    `dfir.om.keys.trusted_keys`: exactly those), else the user's own key, DFIR_SIGNING_KEY's,
    the keys of DFIR_TRUSTED_KEYS and those added with `dfir trust add` (`default_trusted`). A
    file that is unsigned, signed by another key or wrongly signed is a GeError that says how
    to go on. `trust="any"` (else env DFIR_TRUST=any, unless `trusted_keys` is given) checks no
    signature and warns once per process."""
    try:
        trusted = _trusted(trusted_keys, trust)
    except GeError as error:
        raise GeError(error.error_message, "dfir.load") from None
    om = read_om(source)
    if trusted is None:
        warn_untrusted_once(_described(source))
        return om
    try:
        verify_signature(om.data[:HEADER_SIZE], om.signature, trusted)
    except GeError as error:
        where = {"file": os.fspath(source)} if isinstance(source, (str, os.PathLike)) else {}
        raise GeError(f"{error.error_message}; {_ways_forward(om, trusted)}", "dfir.load", where) from None
    return om


def _trusted(trusted_keys, trust: str | None) -> TrustedKeys | None:
    """The keys a load trusts (see `read_trusted`); None when it trusts any file."""
    if trust is None and trusted_keys is not None:
        return trusted_keys_of(trusted_keys)  # the keys given, whatever env DFIR_TRUST says
    if trust_mode(trust) == "any":
        return None
    return default_trusted() if trusted_keys is None else trusted_keys_of(trusted_keys)


def _ways_forward(om: OmFile, trusted: TrustedKeys) -> str:
    """How to run a file that `trusted` refused: trust its signer, or trust any file."""
    anyway = f"or load it with trust=\"any\" (or env {TRUST_ENV}=any) to run it unchecked"
    if om.signature is None:
        return f"to run it, have it signed by a key you trust (`dfir trust add KEY.pub.pem` trusts one), {anyway}"
    if om.signature.public_key not in trusted:
        return (f"to run it, trust its signer with `dfir trust add KEY.pub.pem` (the public key of "
                f"{om.signature.signer}; `dfir trust export` prints it where it was signed), {anyway}")
    return f"to run it, compile it again, {anyway}"


def _described(source: Source) -> str:
    return os.fspath(source) if isinstance(source, (str, os.PathLike)) else f"an .om of {memoryview(source).nbytes} bytes"


def models_of(om: OmFile):
    """The runtime model of the checked `.om` `om`, or a `Bundle` of its members' models."""
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
