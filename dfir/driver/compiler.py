"""`dfir.compile`: build the IR, run the phases, serialize. It only composes; the steps are
`CompileJob`'s, and how they are composed is the strategy's: straight through, or through the
compile cache (on when `ge.graph_compiler_cache_dir` and `ge.graph_key` are both set), which
reuses what earlier compiles stored. The `.om` is signed with `sign_with=`, else env
DFIR_SIGNING_KEY's key, else the user's own key, made on first use (docs/security.md).
"""
from __future__ import annotations

from typing import Protocol

from dfir.core.collector import batched_collection
from dfir.core.errors import GeError
from dfir.driver.cache.incremental import CachedCompile
from dfir.driver.cache.settings import cache_settings
from dfir.driver.job import CompiledModel, CompileJob
from dfir.driver.pipeline import phases_until
from dfir.driver.progress import NO_PROGRESS, CompileProgress
from dfir.frontend.dataflow.flow_graph import FlowGraph
from dfir.frontend.options import refuse_ge_graph_options, validate_options
from dfir.om.trust import signing_key

__all__ = ["CompiledModel", "compile"]


class CompileStrategy(Protocol):
    def compile(self, job: CompileJob, graph, stop_after: str | None) -> CompiledModel: ...


class DirectCompile:
    """Import, run the phases up to `stop_after`, and lower when the last phase ran."""

    def compile(self, job: CompileJob, graph, stop_after: str | None) -> CompiledModel:
        with job.timed("import"):
            module = job.import_graph(graph)
        job.run_phases(module, stop_after)
        if phases_until(stop_after)[-1].name != "lower":
            return CompiledModel(module, None, job.report, job.timings)
        return job.lower(module).compiled


def compile(graph, options: dict[str, str] | None = None, stop_after: str | None = None, *,
            sign_with=None, progress: bool = False) -> CompiledModel:
    """Compile a FlowGraph or GE Graph: import, run the phases (up to `stop_after`), lower to `.om`.

    A FlowGraph compiles with the options it would feed with (`df.init`'s, then its own), which
    `options` override: the most specific setting wins. The `.om` is signed with `sign_with`
    (an Ed25519 private key's PEM path or a loaded key, see `dfir.om.trust.signing_key`), else
    with the key env DFIR_SIGNING_KEY names, else with the user's own key (`dfir.om.trust`, made
    on first use). With `progress`, stderr shows
    the phases (and IREE's GE graphs) as they run on a terminal, else one summary line at the
    end (`dfir.driver.progress`)."""
    options = validate_options(options, api="dfir.compile")
    if isinstance(graph, FlowGraph):
        options = {**graph.compile_options(), **options}
        refuse_ge_graph_options(options, "dfir.compile")
    try:
        key = signing_key(sign_with)
    except GeError as error:
        raise GeError(error.error_message, "dfir.compile") from None
    reporter = CompileProgress([p.name for p in phases_until(stop_after)]) if progress else NO_PROGRESS
    with batched_collection(), reporter.reporting(getattr(graph, "name", type(graph).__name__)):
        return strategy_for(options, stop_after).compile(CompileJob(options, key, reporter), graph, stop_after)


def strategy_for(options: dict[str, str], stop_after: str | None) -> CompileStrategy:
    """The compile cache for a full compile with the cache on; otherwise straight through."""
    settings = cache_settings(options) if phases_until(stop_after)[-1].name == "lower" else None
    return DirectCompile() if settings is None else CachedCompile(settings)
