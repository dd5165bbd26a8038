"""FlowGraph: the graph reaching some outputs; it compiles and loads itself on the first feed.

The first `feed_data`/`feed` compiles the graph with the session's engine (`session.engine()`:
`dfir.compile` and `dfir.load`), or only compiles it when `ge.runFlag` is "0"; feeds and fetches
then go to the loaded runtime model.

As in GE, a wrong argument or call order raises `DfException` (a GeError with GE's `error_code`,
PARAM_INVALID), while `feed_data`/`fetch_data` report what they cannot serve as a return code.
"""
from __future__ import annotations

from dfir.core.errors import DfException
from dfir.core.flow_info import FlowInfo
from dfir.frontend.dataflow import names, session
from dfir.frontend.dataflow.graph import FlowData, FlowOutput
from dfir.frontend.source import user_location
from dfir.frontend.dataflow.reach import reachable
from dfir.frontend.options import validate_flow_graph_options


class FlowGraph:
    """The graph reaching `outputs`; it compiles and loads itself on the first feed."""

    def __init__(self, outputs: list[FlowOutput], graph_options: dict[str, str] | None = None,
                 name: str | None = None, graphpp_builder_async: bool = False):
        if not isinstance(outputs, list | tuple) or not all(isinstance(o, FlowOutput) for o in outputs):
            raise DfException("FlowGraph outputs must be a list of FlowOutput")
        self.outputs = list(outputs)
        self.graph_options = validate_flow_graph_options(graph_options or {}, api="FlowGraph")
        self.name = names.unique_name(name, "FlowGraph", user_location())
        self.align: tuple[int, int, bool] | None = None
        self.exception_catch = False
        self.contains_n_mapping_node = False
        self._model = None
        self._compiled = None

    @property
    def inputs(self) -> list[FlowData]:
        """The FlowData reachable from the outputs, sorted by name (feed order)."""
        return reachable(self.outputs)[0]

    def _check_not_built(self, what: str) -> None:
        if self._compiled is not None:
            raise DfException(f"FlowGraph {self.name}: {what} must be called before the first feed")

    def set_inputs_align_attrs(self, align_max_cache_num: int, align_timeout: int,
                               dropout_when_not_align: bool = False) -> None:
        self._check_not_built("set_inputs_align_attrs")
        if not 0 <= align_max_cache_num <= 1024:
            raise DfException(f"align_max_cache_num={align_max_cache_num} is out of range [0, 1024]")
        if align_timeout != -1 and not 0 < align_timeout <= 600_000:
            raise DfException(f"align_timeout={align_timeout} must be -1 or in (0, 600000] ms")
        self.align = (align_max_cache_num, align_timeout, bool(dropout_when_not_align))

    def set_exception_catch(self, enable_exception_catch: bool = False) -> None:
        """Let UDFs report exceptions (`raise_exception`) that the graph's other UDFs see
        (`get_exception`). As in GE, the graph must align its inputs too (`set_inputs_align_attrs`
        with a cache of at least 1); the first feed refuses it otherwise."""
        self._check_not_built("set_exception_catch")
        self.exception_catch = bool(enable_exception_catch)

    def set_contains_n_mapping_node(self, contains_n_mapping_node: bool) -> None:
        """Whether some node turns a number of inputs into another number of outputs (a batched
        input makes it so on its own); the graph and its plan record it (`n_mapping`)."""
        self._check_not_built("set_contains_n_mapping_node")
        self.contains_n_mapping_node = bool(contains_n_mapping_node)

    def compile_options(self) -> dict[str, str]:
        """The options this graph compiles with: `init`'s, overridden by the graph's own."""
        return {**session.global_options(), **self.graph_options}

    def compile(self):
        """Compile once with the global and graph options; later calls return the same model."""
        if self._compiled is None:
            if self.exception_catch and (self.align is None or self.align[0] == 0):
                raise DfException(f"FlowGraph {self.name}: exception catch is enabled while input alignment is "
                                  f"off; call set_inputs_align_attrs with align_max_cache_num > 0 as well")
            self._compiled = session.engine().compile(self, {})
        return self._compiled

    def _ensure_loaded(self):
        if self._model is not None:  # every feed after the first: nothing to look up
            return self._model
        compiled = self.compile()
        if self.compile_options().get("ge.runFlag") == "0":
            return None
        self._model = session.engine().load(compiled.om)
        session.track(self._model)
        return self._model

    def _loaded_for_fetch(self):
        if self._model is None:
            raise DfException(f"FlowGraph {self.name} has no loaded model: feed data first "
                          "(with ge.runFlag=\"0\" the graph is only compiled)")
        return self._model

    def feed_data(self, feed_dict: dict, flow_info: FlowInfo | None = None, timeout: int = -1,
                  partial_inputs: bool = False) -> int:
        model = self._model or self._ensure_loaded()  # every feed after the first: one attribute read
        if model is None:
            return 0
        return model.feed_data(feed_dict, flow_info, timeout, partial_inputs)

    def fetch_data(self, indexes: list[int] | None = None, timeout: int = -1):
        return (self._model or self._loaded_for_fetch()).fetch_data(indexes, timeout)

    def feed(self, feed_dict: dict, timeout: int = -1, partial_inputs: bool = False) -> int:
        model = self._ensure_loaded()
        if model is None:
            return 0
        return model.feed(feed_dict, timeout, partial_inputs)

    def fetch(self, indexes: list[int] | None = None, timeout: int = -1):
        return self._loaded_for_fetch().fetch(indexes, timeout)
