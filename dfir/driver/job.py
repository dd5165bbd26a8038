"""One compile's steps: import, run the phases, lower; `dfir.compile` and the compile cache
compose them (`CompileJob`), and both give a `CompiledModel`."""
from __future__ import annotations

import io
import os
import time
from contextlib import contextmanager
from typing import Iterator, Mapping, NamedTuple

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp, StringAttr
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from dfir.core.atomic_file import write_atomic
from dfir.core.backends import COMPILED_BACKENDS
from dfir.core.errors import GeError
from dfir.dialects import ge
from dfir.dialects.df import DF
from dfir.dialects.ge import GE
from dfir.dialects.upstream import UPSTREAM_DIALECTS
from dfir.driver.cache.resource_config import canonical_config, load_resource_config, resource_config_path
from dfir.driver.backend_choice import MeasuringChooser
from dfir.driver.cache.settings import DEPLOY_INFO_OPTION, compile_salt
from dfir.driver.pipeline import pipeline_spec, run_phases
from dfir.driver.progress import NO_PROGRESS, SilentProgress
from dfir.frontend.dataflow.flow_graph import FlowGraph
from dfir.frontend.deploy import DeployInfo, load_checked_deploy_info
from dfir.frontend.ge.graph import Graph
from dfir.frontend.importer import import_flow_graph, import_ge_graph
from dfir.driver.host_backends import fastest_backend, host_cpu
from dfir.frontend.options import (BACKEND_OPTION, CHANNEL_DEPTH_OPTION, CLUSTER_OPTION, RAY_ADDRESS_OPTION,
                                   RECOVER_OPTION, THREADS_OPTION, TRACE_OPTION, UDF_TIMEOUT_OPTION, default_backend,
                                   memory_pool_bytes)
from dfir.lowering.om import om_bytes
from dfir.lowering.plan import GeBuild, LoweredGraph, Skeleton, lower_graph
from dfir.om.keys import SigningKey
from dfir.om.plan import DEFAULT_CHANNEL_DEPTH, DEFAULT_RECOVER, Cluster, trace_rate
from dfir.om.signature import signed


class CompileReport(list):
    """One line per pass that ran, saying what it did (`str()` joins them)."""

    def __str__(self) -> str:
        return "\n".join(self)


class CompiledModel:
    """The result of `dfir.compile`: the final IR, the `.om` bytes (None if stopped early), a report.

    A model taken whole from the compile cache comes with its final IR printed (`ir`); `module`
    parses it on first use.
    """

    def __init__(self, module: ModuleOp | None, om: bytes | None, report: CompileReport,
                 timings: dict[str, float] | None = None, ir: str | None = None):
        assert module is not None or ir is not None, "a compiled model needs its IR"
        self._module = module
        self.om = om
        self.report = report
        self.timings = {} if timings is None else timings
        self._ir = ir

    @property
    def module(self) -> ModuleOp:
        if self._module is None:
            self._module = Parser(make_context(), self._ir, "<cached IR>").parse_module()
        return self._module

    @property
    def ir(self) -> str:
        if self._ir is None:
            self._ir = print_module(self.module)
        return self._ir

    def save(self, path: str | os.PathLike) -> str:
        """Write the `.om` (adding the `.om` suffix if `path` has none); returns the path written.

        The file is replaced atomically (`dfir.core.atomic_file.write_atomic`): a reader of the
        path, or a model loaded from it, never sees a partial file."""
        if self.om is None:
            raise GeError("the model was compiled with stop_after before 'lower' and has no .om",
                          "CompiledModel.save")
        path = os.fspath(path)
        if not path.endswith(".om"):
            path += ".om"
        write_atomic(path, self.om)
        return path


def make_context() -> Context:
    """The dialects of dfir's IR: builtin, df and ge, and the upstream ones GE graphs lower to."""
    ctx = Context()
    for dialect in (Builtin, DF, GE, *UPSTREAM_DIALECTS):
        ctx.load_dialect(dialect)
    return ctx


def print_module(module: ModuleOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue() + "\n"


def print_module_parts(module: ModuleOp, printed: Mapping[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """`print_module(module)`, assembled from its top-level ops printed one by one, and the text
    of each top-level symbol op by symbol. Ops whose symbol is in `printed` are not printed but
    taken from there (the compile cache keeps the texts of what it reuses)."""
    if module.attributes or module.properties:
        return print_module(module), {}
    texts: dict[str, str] = {}
    chunks = []
    for op in module.ops:
        sym = op.sym_name.data if isinstance(getattr(op, "sym_name", None), StringAttr) else None
        text = (printed or {}).get(sym) if sym is not None else None
        if text is None:
            stream = io.StringIO()
            printer = Printer(stream=stream)
            with printer.indented():  # one level deeper, as in the module
                printer.print_op(op)
            text = stream.getvalue()
        if sym is not None:
            texts[sym] = text
        chunks.append(text)
    return "builtin.module {" + "".join(f"\n  {chunk}" for chunk in chunks) + "\n}\n", texts


def import_graph(graph, options: dict[str, str], **importer_args) -> ModuleOp:
    """The module of a FlowGraph or GE Graph; `importer_args` go to `import_flow_graph`."""
    if isinstance(graph, FlowGraph):
        return import_flow_graph(graph, **importer_args)
    if isinstance(graph, Graph):
        return import_ge_graph(graph, options)
    raise GeError(f"dfir.compile expects a FlowGraph or a GE Graph, got {type(graph).__name__}",
                  "dfir.compile")


class Lowering(NamedTuple):
    """What lowering made: the compiled model, its plan with the units lowered, and the printed
    text of each top-level symbol op."""

    compiled: CompiledModel
    lowered: LoweredGraph
    texts: dict[str, str]


class CompileJob:
    """One compile: its options, the key that signs its `.om` (None: unsigned), its report,
    timings and progress reporter, and the steps `compile` composes."""

    def __init__(self, options: dict[str, str], signing_key: SigningKey | None = None,
                 progress: SilentProgress = NO_PROGRESS):
        self.options = options
        self.signing_key = signing_key
        self.progress = progress
        self.report = CompileReport()
        self.timings: dict[str, float] = {}
        self.ctx = make_context()
        backends = backend_options(options)
        self.pass_options = {
            "fingerprint-subgraphs": {"salt": compile_salt({**options, **_backend_salt(backends)},
                                                           pipeline_spec("lower"))},
            "convert-ge-to-linalg": backends}
        self.resource_path = resource_config_path(options)
        deploy_path = options.get(DEPLOY_INFO_OPTION)
        if deploy_path:
            self.pass_options["place-nodes"] = {"deploy_info": _deploy_info(deploy_path, self.resource_path)}
        self.resource_config = load_resource_config(self.resource_path) if self.resource_path else None
        self._resource_bytes = None if self.resource_config is None else canonical_config(self.resource_config)

    def import_graph(self, graph, **importer_args) -> ModuleOp:
        """The module of `graph` (see `import_graph`)."""
        self.progress.phase("import")
        return import_graph(graph, self.options, **importer_args)

    @contextmanager
    def timed(self, step: str) -> Iterator[None]:
        """Add the time the block takes to `timings[step]`."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[step] = self.timings.get(step, 0.0) + time.perf_counter() - start

    def run_phases(self, module: ModuleOp, stop_after: str | None = None, *,
                   start_after: str | None = None, verify=None, skip_absent: bool = False) -> None:
        """Run the phases (see `dfir.driver.pipeline.run_phases`); IR errors become GeErrors."""
        with self.timed("passes"):
            try:
                run_phases(self.ctx, module, stop_after, self.report, start_after=start_after,
                           pass_options=self.pass_options, verify=verify, skip_absent=skip_absent,
                           on_phase=self.progress.phase)
            except (VerifyException, DiagnosticException) as error:
                raise GeError(str(error), "dfir.compile") from error

    def lower(self, module: ModuleOp, reuse: Mapping[str, LoweredGraph] | None = None,
              printed: Mapping[str, str] | None = None, cache_manifest: bytes | None = None,
              skeleton: Skeleton | None = None) -> Lowering:
        """Lower the module to `.om` bytes, merging the units in `reuse`, the graph's plan
        `skeleton` and the op texts in `printed` instead of lowering and printing those again."""
        self.progress.phase("lower")
        self.progress.expect_executables(sum(1 for op in module.ops if isinstance(op, ge.GraphOp)
                                             and op.backend is not None and op.backend.data in COMPILED_BACKENDS))
        with self.timed("lower"):
            lowered = lower_graph(module, reuse, skeleton, channel_depth(self.options), cluster(self.options),
                                  self.ge_build(), memory_pool_bytes(self.options),
                                  recover=recover(self.options), udf_timeout_ms=udf_timeout_ms(self.options),
                                  trace=trace_rate(self.options.get(TRACE_OPTION, "off")))
            ir_text, texts = print_module_parts(module, printed)
            om = om_bytes(lowered, ir_text, resource_config=self._resource_bytes,
                          cache_manifest=cache_manifest)
            if self.signing_key is not None:
                om = signed(om, self.signing_key)
        return Lowering(CompiledModel(module, om, self.report, self.timings, ir_text), lowered, texts)

    def ge_build(self) -> GeBuild:
        """How lowering builds GE graphs' code: the threads option, `auto` measured."""
        threads = self.options.get(THREADS_OPTION)
        threads = None if threads is None else int(threads)
        chooser = MeasuringChooser(threads, self.report, self.progress)
        return GeBuild(threads, chooser, self.progress.executable_done)

    def cached(self, om: bytes, ir_text: str) -> CompiledModel:
        """A model the compile cache had whole: its `.om` (signed again by this compile's key, if
        it has one; as stored otherwise, so a model signed where it was compiled stays so) and
        final IR."""
        self.progress.from_cache()
        if self.signing_key is not None:
            om = signed(om, self.signing_key)
        return CompiledModel(None, om, self.report, self.timings, ir_text)


def _deploy_info(path: str, resource_config_path: str | None) -> DeployInfo:
    """The deploy info `place-nodes` places by, read before any pass runs."""
    try:
        return load_checked_deploy_info(path, resource_config_path)
    except GeError as error:
        raise GeError(str(error), "dfir.compile") from None


def backend_options(options: Mapping[str, str]) -> dict[str, str]:
    """The options of `convert-ge-to-linalg`: the compile's backend (`dfir.ge.backend`, else
    `DFIR_GE_BACKEND`, else auto) and what auto means on this machine."""
    return {"backend": options.get(BACKEND_OPTION) or default_backend(), "auto_backend": fastest_backend()}


def _backend_salt(backends: Mapping[str, str]) -> dict[str, str]:
    """The backend choice and the CPU compiled for, as salt options: a compile for another
    backend or another CPU keys another cache entry."""
    return {**{f"{BACKEND_OPTION}:{name}": value for name, value in backends.items()},
            f"{BACKEND_OPTION}:host_cpu": host_cpu()}


def cluster(options: Mapping[str, str]) -> Cluster:
    """Where the options say the model's servers run (`dfir.runtime.cluster`, `dfir.runtime.ray_address`)."""
    return Cluster(options.get(CLUSTER_OPTION, "local"), options.get(RAY_ADDRESS_OPTION, ""))


def channel_depth(options: Mapping[str, str]) -> int:
    """The depth of the runtime's channels the options ask for (`dfir.runtime.channel_depth`)."""
    return int(options.get(CHANNEL_DEPTH_OPTION, DEFAULT_CHANNEL_DEPTH))


def recover(options: Mapping[str, str]) -> str:
    """What the runtime does when a worker dies, as the options ask (`dfir.runtime.recover`)."""
    return options.get(RECOVER_OPTION, DEFAULT_RECOVER)


def udf_timeout_ms(options: Mapping[str, str]) -> int | None:
    """The timeout of a UDF node's calls the options ask for (`dfir.runtime.udf_timeout_ms`;
    None: none), for the nodes whose compile config or deploy entry gives none."""
    value = options.get(UDF_TIMEOUT_OPTION)
    return None if value is None else int(value)
