"""`ge.offline_compile`: compile graphs into offline models (`.om` files) and bundles.

    build_initialize({"log_level": "0"})
    model = build_model(graph, {"input_format": "ND"})
    save_model("output_model", model)                # writes output_model.om
    bundle = bundle_build_model([GraphWithOptions(graph1, {}), GraphWithOptions(graph2, {})])
    bundle_save_model("bundle_output", bundle)       # writes bundle_output.om
    build_finalize()

The functions follow the seed's API: `build_initialize` must come first (once, until
`build_finalize`); options are `str -> str` (the same keys as `dfir.compile`), and a key given to
`build_model` wins over the same key given to `build_initialize`. Every failure is a `GeError`
(a RuntimeError) whose message names the API and the context, as GE's do:
``BuildModel failed; graph=mlp; <what is wrong>``. A graph is a GE `Graph` or a `FlowGraph`.
`build_model` and `bundle_build_model` sign what they build with `sign_with=` (an Ed25519 private
key's PEM path or a loaded key), else with the key env DFIR_SIGNING_KEY names, else with the
user's own key (docs/security.md): a model built here loads where that key is trusted (`dfir
trust add` of the `dfir trust export` of this user).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from dfir.core.atomic_file import write_atomic
from dfir.core.errors import GeError
from dfir.driver import compiler
from dfir.frontend.dataflow.flow_graph import FlowGraph
from dfir.frontend.ge.graph import Graph
from dfir.frontend.options import validate_options
from dfir.lowering.om_writer import write_bundle
from dfir.om.keys import SigningKey
from dfir.om.plan import Plan
from dfir.om.schema import PartitionType
from dfir.om.signature import signed
from dfir.om.trust import signing_key
from dfir.runtime.om import read_om

__all__ = ["GraphWithOptions", "ModelBuffer", "build_finalize", "build_initialize", "build_model",
           "bundle_build_model", "bundle_save_model", "save_model"]

_lock = threading.Lock()
_global_options: dict[str, str] | None = None


@dataclass
class GraphWithOptions:
    """A graph and its build options, one member of a bundle."""

    graph: object
    build_options: Dict[str, str] = field(default_factory=dict)


class ModelBuffer:
    """A compiled offline model (or bundle) in memory, returned by `build_model` and
    `bundle_build_model`. It cannot be constructed, copied or deep-copied."""

    __slots__ = ("_data", "_is_bundle")

    def __init__(self, *args, **kwargs):
        raise TypeError("ModelBuffer cannot be constructed; build_model and bundle_build_model return one")

    @classmethod
    def _of(cls, data: bytes, is_bundle: bool) -> ModelBuffer:
        buffer = object.__new__(cls)
        buffer._data = data
        buffer._is_bundle = is_bundle
        return buffer

    @property
    def length(self) -> int:
        """The model's size in bytes."""
        return len(self._data)

    def get_length(self) -> int:
        """The model's size in bytes."""
        return len(self._data)

    def __copy__(self):
        raise TypeError("ModelBuffer cannot be copied")

    def __deepcopy__(self, memo):
        raise TypeError("ModelBuffer cannot be deep-copied")

    def __reduce_ex__(self, protocol):
        raise TypeError("ModelBuffer cannot be copied or pickled")

    def __repr__(self) -> str:
        kind = "bundle" if self._is_bundle else "model"
        return f"<ModelBuffer {kind} of {len(self._data)} bytes>"


def build_initialize(global_options: Optional[dict] = None) -> None:
    """Start offline compilation with `global_options` (each build's options may override them)."""
    global _global_options
    options = _checked_options(global_options, "BuildInitialize")
    with _lock:
        if _global_options is not None:
            raise GeError("offline compilation is already initialized; call build_finalize first",
                          "BuildInitialize")
        _global_options = options


def build_finalize() -> None:
    """End offline compilation (a later `build_initialize` starts it again)."""
    global _global_options
    with _lock:
        _global_options = None


def build_model(graph, build_options: Optional[dict] = None, *, sign_with=None) -> ModelBuffer:
    """Compile one graph into an offline model held in memory, signed with `sign_with` (else
    env DFIR_SIGNING_KEY's key, else the user's own key)."""
    api = "BuildModel"
    options = _build_options(build_options, api)
    return ModelBuffer._of(_compile(graph, options, api, _signing_key(sign_with, api)).om, is_bundle=False)


def save_model(output_file: str, model: ModelBuffer) -> None:
    """Write `model` to `output_file` + ".om"."""
    _save(output_file, model, bundle=False, api="SaveModel")


def bundle_build_model(graph_with_options: List[GraphWithOptions], *, sign_with=None) -> ModelBuffer:
    """Compile two or more graphs, each with its own options, into one bundle model.

    Each member is named after its graph; the bundle's variable memory size is the bytes of the
    distinct variables (by name) of all members. The bundle is signed as `build_model` signs (its
    signature covers the members, which carry none of their own).
    """
    api = "BundleBuildModel"
    _initialized_options(api)
    key = _signing_key(sign_with, api)
    if not isinstance(graph_with_options, (list, tuple)) or len(graph_with_options) < 2:
        count = len(graph_with_options) if isinstance(graph_with_options, (list, tuple)) else 0
        raise GeError(f"a bundle needs a list of at least 2 GraphWithOptions, got {count}", api)
    oms, names, variables = [], [], {}
    for index, member in enumerate(graph_with_options):
        if not isinstance(member, GraphWithOptions):
            raise GeError(f"member {index} must be a GraphWithOptions, got {type(member).__name__}", api)
        compiled = _compile(member.graph, _build_options(member.build_options, api), api, key)
        oms.append(compiled.om)
        names.append(_graph_name(member.graph))
        variables.update(_variable_bytes(compiled.om))
    try:
        data = write_bundle(oms, names, sum(variables.values()), name="bundle")
    except GeError as error:
        raise GeError(error.error_message, api) from None
    return ModelBuffer._of(signed(data, key), is_bundle=True)


def bundle_save_model(output_file: str, model: ModelBuffer) -> None:
    """Write a bundle `model` to `output_file` + ".om"."""
    _save(output_file, model, bundle=True, api="BundleSaveModel")


def _initialized_options(api: str) -> dict[str, str]:
    with _lock:
        if _global_options is None:
            raise GeError("offline compilation is not initialized; call build_initialize first", api)
        return dict(_global_options)


def _build_options(build_options: object, api: str) -> dict[str, str]:
    """The global options overridden by `build_options`, checked."""
    return {**_initialized_options(api), **_checked_options(build_options, api)}


def _checked_options(options: object, api: str) -> dict[str, str]:
    return validate_options(options, api)


def _signing_key(sign_with: object, api: str) -> SigningKey:
    try:
        return signing_key(sign_with)
    except GeError as error:
        raise GeError(error.error_message, api) from None


def _compile(graph, options: dict[str, str], api: str, key: SigningKey):
    if not isinstance(graph, Graph | FlowGraph):
        raise GeError(f"expected a Graph or a FlowGraph, got {type(graph).__name__}", api)
    try:
        return compiler.compile(graph, options, sign_with=key)
    except GeError as error:
        raise GeError(error.error_message, api, {"graph": _graph_name(graph), **error.context}) from None


def _graph_name(graph) -> str:
    return graph.name


def _variable_bytes(om: bytes) -> dict[str, int]:
    """Bytes of each variable of a compiled model, by name (from its plan: a variable is a
    `const` op whose attrs name it, its bytes a weight of its GE graph)."""
    plan = Plan.from_json(read_om(om).models[0].partition(PartitionType.FLOW_MODEL).data)
    return {op.attrs["variable"]: graph.weights[op.weight].size
            for graph in plan.ge_graphs for op in graph.ops if "variable" in op.attrs}


def _save(output_file: str, model: ModelBuffer, bundle: bool, api: str) -> None:
    if not isinstance(output_file, str) or not output_file:
        raise GeError(f"output_file must be a non-empty str, got {output_file!r}", api)
    if not isinstance(model, ModelBuffer):
        raise GeError(f"model must be a ModelBuffer, got {type(model).__name__}", api)
    if model._is_bundle != bundle:
        expected, use = ("a bundle", "save_model") if bundle else ("a single model", "bundle_save_model")
        raise GeError(f"expected {expected}; save this one with {use}", api, {"file": output_file})
    path = output_file + ".om"
    try:
        write_atomic(path, model._data)
    except OSError as error:
        raise GeError(f"cannot write the model: {error.strerror}", api, {"file": path}) from None
