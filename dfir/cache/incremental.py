"""A compile through the cache: reuse the whole model when nothing changed, else every process
point whose fingerprint is unchanged, and compile only the rest.

1. Under the key's lock, run the `fingerprint` phase on the imported module.
2. Look the `df.graph` fingerprint up among the key's cached models: a valid one built with the
   same variables and resource config is the result, its `.om` read and checked, no pass run,
   nothing lowered (the import is not verified again either: the same fingerprint compiled
   before, so the same IR verified before).
3. Otherwise look each process point's fingerprint up among the key's subgraph units. While the
   remaining phases run, the `ge.graph`s that only found points use are taken out of the module
   (their passes are skipped), and only what is compiled again is verified.
4. Lower: merge the units found, lower the other points, print only what was not found; the
   result is byte for byte what a compile without the cache gives.
5. Store the new units and the model, and append the model's index entry.

Found units are reused under this assumption: a process point compiles to the same thing
whatever the rest of the graph is, given its fingerprint (its IR, what it refers to, and the
compile salt). A pass that makes a process point depend on anything else must add that to the
fingerprint.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator

from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.ir import Operation

from dfir.cache.settings import CacheSettings
from dfir.cache.store import CacheStore, model_manifest
from dfir.cache.units import CachedUnit
from dfir.cache.variables import variable_descs
from dfir.dialects.df import FuncPpOp, GraphPpOp
from dfir.lowering.plan import the_graph
from dfir.passes.fingerprint_subgraphs import fingerprint_of

if TYPE_CHECKING:
    from dfir.compiler import CompiledModel, CompileJob

__all__ = ["compile_cached"]


@dataclass
class _Point:
    """A process point: its op, fingerprint, and the symbols of the top-level ops its unit holds
    (itself and the non-process-point symbols it refers to, i.e. its `ge.graph`)."""

    op: Operation
    fingerprint: str
    symbols: list[str]
    references: set[str]


def compile_cached(job: CompileJob, module: ModuleOp, settings: CacheSettings) -> CompiledModel:
    """Compile `module` (just imported) through the cache `settings` name (see the module docstring)."""
    store = CacheStore(settings)
    with store.locked():
        job.run_phases(module, "fingerprint", start_after="import", verify=_no_verify)
        fingerprint = fingerprint_of(the_graph(module))
        points = _process_points(module)
        variables = variable_descs(module)
        with job.timed("cache"):
            model = store.find_model(fingerprint, variables, job.resource_config, job.resource_path)
        if model is not None:
            _report(job, settings, f"hit {model.entry.cache_file_name}", points, set(points))
            return job.cached(model.om, model.ir_text)
        return _compile_and_store(job, module, store, fingerprint, points, variables)


def _compile_and_store(job: CompileJob, module: ModuleOp, store: CacheStore, fingerprint: str,
                       points: dict[str, _Point], variables: list[dict]) -> CompiledModel:
    """Steps 3 to 5 of the module docstring."""
    with job.timed("cache"):
        found = {sym: unit for sym, point in points.items()
                 if (unit := store.find_unit(point.fingerprint)) is not None}
    skipped = {points[sym].op for sym in found}
    with _detached(module, _only_found_graphs(module, points, found)) as detached:
        verify = _verify_except(skipped | set(detached))
        verify(module)
        job.run_phases(module, start_after="fingerprint", verify=verify)
    manifest = model_manifest(store.key, fingerprint, {sym: p.fingerprint for sym, p in points.items()})
    lowering = job.lower(module, reuse={sym: unit.lowered for sym, unit in found.items()},
                         printed={s: text for unit in found.values() for s, text in unit.texts.items()},
                         cache_manifest=manifest)
    with job.timed("cache"):
        for sym, unit in lowering.lowered.units.items():
            texts = {s: lowering.texts[s] for s in points[sym].symbols}
            store.store_unit(points[sym].fingerprint, CachedUnit(unit, texts))
        entry = store.store_model(fingerprint, lowering.compiled.om, variables)
    _report(job, store.settings, f"miss; stored {entry.cache_file_name}", points, set(found))
    return lowering.compiled


def _process_points(module: ModuleOp) -> dict[str, _Point]:
    symbols = {op.sym_name.data: op for op in module.ops if hasattr(op, "sym_name")}
    points = {}
    for op in module.ops:
        if isinstance(op, FuncPpOp | GraphPpOp):
            references = _references(op)
            owned = [s for s in references if s in symbols and not isinstance(symbols[s], FuncPpOp | GraphPpOp)]
            points[op.sym_name.data] = _Point(op, fingerprint_of(op), [op.sym_name.data, *owned], references)
    return points


def _references(op: Operation) -> set[str]:
    """The symbols `op` and the ops inside it refer to."""
    return {attr.root_reference.data for inner in op.walk()
            for attr in (*inner.properties.values(), *inner.attributes.values())
            if isinstance(attr, SymbolRefAttr)}


def _only_found_graphs(module: ModuleOp, points: dict[str, _Point], found: dict) -> list[Operation]:
    """The top-level non-point ops that found points hold and no point compiled again reaches."""
    reached: set[str] = set()
    pending = [sym for sym in points if sym not in found]
    while pending:
        sym = pending.pop()
        if sym in reached:
            continue
        reached.add(sym)
        if sym in points:
            pending.extend(points[sym].references)
    held = {s for sym in found for s in points[sym].symbols[1:]}
    return [op for op in module.ops if getattr(op, "sym_name", None) is not None
            and op.sym_name.data in held - reached]


@contextmanager
def _detached(module: ModuleOp, ops: list[Operation]) -> Iterator[list[Operation]]:
    """Take `ops` out of the module for the block, then put each back where it was."""
    block = module.body.block
    places = [(op, op.next_op) for op in ops]
    for op in ops:
        block.detach_op(op)
    try:
        yield ops
    finally:
        for op, following in reversed(places):
            if following is not None and following.parent is block:
                block.insert_op_before(op, following)
            else:
                block.add_op(op)


def _verify_except(skipped: set[Operation]) -> Callable[[ModuleOp], None]:
    def verify(module: ModuleOp) -> None:
        for op in module.ops:
            if op not in skipped:
                op.verify()
    return verify


def _no_verify(module: ModuleOp) -> None:
    """The fingerprint pass only adds attributes: nothing for a verifier to find."""


def _report(job: CompileJob, settings: CacheSettings, outcome: str, points: dict[str, _Point],
            hits: set[str]) -> None:
    job.report.append(f"cache: graph key {settings.key}: {outcome}; {len(hits)} of {len(points)} "
                      "process points reused")
    for sym, point in points.items():
        status = "hit" if sym in hits else "miss"
        job.report.append(f"cache: @{sym} {status} {point.fingerprint[:len('sha256:') + 16]}")
