"""A compile through the cache: load the whole model when the graph is unchanged, else reuse every
compiled part whose key is unchanged, and import and compile only the rest.

1. Key the frontend objects (`dfir.frontend.cache_keys`) before anything is imported. Under the
   key's lock, the newest valid cached model with this frontend key (and this resource config)
   is the result: nothing is imported, no pass runs, nothing is lowered or verified (the same
   frontend imported to the same IR, which verified when it was compiled).
2. Otherwise import, leaving out what the cache has compiled, by frontend key: a graph process
   point whose point key an index entry lists with a valid unit is imported without its
   `ge.graph` (the graph is not built); a `df.graph` whose flow key has a valid graph unit is
   imported as an empty placeholder (its nodes are not built). Run the `fingerprint` phase:
   those points keep the fingerprints their units were filed under, and the `df.graph`'s is
   computed from the structure its unit recorded.
3. A valid cached model with the `df.graph` fingerprint (the frontend changed, not the IR) is
   the result; its index entry takes this frontend key.
4. Otherwise look the other process points up among the units by fingerprint. What was found,
   the `ge.graph`s only found points use, and the placeholder are taken out of the module while
   the remaining phases run (a phase acting on none of what is left is skipped). Only what is
   compiled again is verified, at the boundaries: as imported, and as the last phase left it.
5. Lower: merge the units found, take the graph's plan skeleton and text from its unit (with
   its new fingerprint written into the text), lower and print only the rest. The result is
   byte for byte what a compile without the cache gives.
6. Store the new units and the model, and append the model's index entry with its frontend key
   and the point keys.

Parts are reused under one assumption: a process point compiles to the same thing whatever the
rest of the graph is, given its fingerprint (its IR, what it refers to, the compile salt), and
the `df.graph` given its flow key (everything it is imported from, the salt and the resource
config). A pass that makes either depend on anything else must add that to the key.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Block, Operation, Region
from xdsl.utils.exceptions import VerifyException

from dfir.core.errors import GeError
from dfir.dialects import df
from dfir.driver.cache.resource_config import canonical_config
from dfir.driver.cache.settings import CacheSettings
from dfir.driver.cache.store import CacheStore, cache_trust, model_manifest
from dfir.driver.cache.units import CachedGraph, CachedUnit
from dfir.driver.cache.variables import variable_descs
from dfir.driver.job import CompiledModel, CompileJob
from dfir.driver.pipeline import phases_until
from dfir.frontend.cache_keys import FrontendKeys, frontend_keys
from dfir.frontend.dataflow.flow_graph import FlowGraph
from dfir.lowering.plan import the_graph
from dfir.passes.fingerprint_subgraphs import (FINGERPRINT_ATTR, FingerprintSubgraphs, Structure,
                                               fingerprint_from, fingerprint_module, fingerprint_of)

__all__ = ["CachedCompile", "compile_cached"]

_log = logging.getLogger("dfir.cache")


class CachedCompile:
    """The compile strategy of a compile with the cache on: `compile_cached` (a full compile)."""

    def __init__(self, settings: CacheSettings):
        self.settings = settings

    def compile(self, job: CompileJob, graph, stop_after: str | None) -> CompiledModel:
        assert stop_after in (None, "lower"), "the compile cache holds only full compiles"
        return compile_cached(job, graph, self.settings)


@dataclass
class _Point:
    """A process point: its op, fingerprint, and the symbols of the top-level ops its unit holds
    (itself and the non-process-point symbols it refers to, i.e. its `ge.graph`)."""

    op: Operation
    fingerprint: str
    symbols: list[str]
    references: set[str]


def compile_cached(job: CompileJob, graph, settings: CacheSettings) -> CompiledModel:
    """Compile the FlowGraph or GE Graph `graph` through the cache `settings` name (see the
    module docstring)."""
    try:
        trusted = cache_trust(job.signing_key)
    except GeError as error:
        raise GeError(error.error_message, "dfir.compile") from None
    store = CacheStore(settings, job.signing_key, trusted)
    with job.timed("frontend"):
        frontend = frontend_keys(graph, job.pass_options[FingerprintSubgraphs.name]["salt"])
    with store.locked():
        with job.timed("cache"):
            model = store.find_model(lambda e: e.frontend_key == frontend.graph_key,
                                     job.resource_config, job.resource_path)
        if model is not None:
            subgraphs = model.manifest["subgraphs"]
            _report(job, settings, f"hit {model.entry.cache_file_name}", subgraphs, set(subgraphs))
            return job.cached(model.om, model.ir_text)
        return _IncrementalCompile(job, store, frontend).run(graph)


class _IncrementalCompile:
    """Steps 2 to 6 of the module docstring, for one compile."""

    def __init__(self, job: CompileJob, store: CacheStore, frontend: FrontendKeys):
        self.job = job
        self.store = store
        self.frontend = frontend
        self.salt = job.pass_options[FingerprintSubgraphs.name]["salt"]
        self.resource_config = None if job.resource_config is None else canonical_config(job.resource_config)
        self.known_points = {key: fp for entry in store.entries() for key, fp in entry.points.items()}
        self.point_keys: dict[str, str] = {}          # point symbol -> point key
        self.stand_ins: dict[str, CachedUnit] = {}     # point symbol -> unit, its graph not imported
        self.flow_placeholder: list[Operation] = []    # the df.graph's, when not imported
        self.flow_key: str | None = None
        self.graph_unit: CachedGraph | None = None     # the df.graph's unit, when not imported

    def run(self, graph) -> CompiledModel:
        job = self.job
        stand_ins = {"payloads": self.frontend.payloads, "walk": self.frontend.walk,
                     "reused_graph": self._reused_graph, "reused_flow": self._reused_flow}
        with job.timed("import"):
            module = job.import_graph(graph, **(stand_ins if isinstance(graph, FlowGraph) else {}))
        structures = self._fingerprint(module)
        fingerprint = fingerprint_of(the_graph(module))
        points = _process_points(module)
        variables = variable_descs(module, {sym: unit.variables for sym, unit in self.stand_ins.items()})
        point_keys = {key: points[sym].fingerprint for sym, key in self.point_keys.items()}
        with job.timed("cache"):
            model = self.store.find_model(lambda e: e.fingerprint == fingerprint, job.resource_config,
                                          job.resource_path)
            if model is not None:
                self.store.rekey(model.entry, self.frontend.graph_key, point_keys)
        if model is not None:
            _report(job, self.store.settings, f"hit {model.entry.cache_file_name}",
                    {sym: p.fingerprint for sym, p in points.items()}, set(points))
            return job.cached(model.om, model.ir_text)
        return self._compile_and_store(module, structures, points, variables, point_keys)

    def _reused_graph(self, pp, pp_symbol: str, graph_symbol: str) -> bool:
        """The importer's `reused_graph`: whether the graph point has a valid unit."""
        key = self.frontend.point_key(pp, pp_symbol, graph_symbol)
        if key is None:
            return False
        self.point_keys[pp_symbol] = key
        fingerprint = self.known_points.get(key)
        unit = self.store.find_unit(fingerprint) if fingerprint is not None else None
        if unit is None or list(unit.texts) != [pp_symbol, graph_symbol]:
            return False
        self.stand_ins[pp_symbol] = unit
        return True

    def _reused_flow(self, node_symbols: list[str], graph_symbol: str) -> Operation | None:
        """The importer's `reused_flow`: a placeholder for a `df.graph` with a valid graph unit."""
        self.flow_key = self.frontend.flow_key(node_symbols, graph_symbol, self.resource_config)
        unit = self.store.find_graph(self.flow_key)
        if unit is None or unit.symbol != graph_symbol:
            return None
        self.graph_unit = unit
        self.flow_placeholder = [df.GraphOp(graph_symbol, Region(Block()))]
        return self.flow_placeholder[0]

    def _fingerprint(self, module: ModuleOp) -> dict[str, Structure]:
        """The `fingerprint` phase, run here for the structures it records (see
        `fingerprint_module`), with the fingerprints of what was not imported given (step 2)."""
        assert [type(p) for p in phases_until("fingerprint")[-1].passes] == [FingerprintSubgraphs], \
            "the compile cache runs the fingerprint phase itself: it must hold only fingerprint-subgraphs"
        self.job.progress.phase("fingerprint")
        for op in module.ops:
            if isinstance(op, df.GraphPpOp) and op.sym_name.data in self.stand_ins:
                fingerprint = self.known_points[self.point_keys[op.sym_name.data]]
                op.attributes[FINGERPRINT_ATTR] = StringAttr(fingerprint)
        with self.job.timed("passes"), _detached(module, self.flow_placeholder):
            structures = fingerprint_module(module, self.salt, keep_existing=True)
        if self.graph_unit is not None:
            keys = {op.sym_name.data: key for op in module.ops if (key := fingerprint_of(op)) is not None}
            graph = the_graph(module)
            fingerprint = fingerprint_from(self.graph_unit.structure, keys, self.salt)
            graph.attributes[FINGERPRINT_ATTR] = StringAttr(fingerprint)
        self.job.report.append(f"{FingerprintSubgraphs.name}: {FingerprintSubgraphs().summary(module)}")
        return structures

    def _compile_and_store(self, module: ModuleOp, structures: dict[str, Structure],
                           points: dict[str, _Point], variables: list[dict],
                           point_keys: dict[str, str]) -> CompiledModel:
        """Steps 4 to 6 of the module docstring."""
        job, store, graph_unit = self.job, self.store, self.graph_unit
        graph = the_graph(module)
        fingerprint = fingerprint_of(graph)
        with job.timed("cache"):
            found = dict(self.stand_ins)
            found.update({sym: unit for sym, point in points.items() if sym not in found
                          and (unit := store.find_unit(point.fingerprint)) is not None})
        skipped = {points[sym].op for sym in found}
        taken_out = dict.fromkeys([*self.flow_placeholder, *_only_found_graphs(module, points, found)])
        with _detached(module, list(taken_out)) as detached:
            verify = _verify_except(skipped | set(detached))
            verify(module)
            job.run_phases(module, start_after="fingerprint", verify=_no_verify, skip_absent=True)
            verify(module)
        printed = {s: text for sym, unit in found.items() if sym not in self.stand_ins
                   for s, text in unit.texts.items()}
        for sym, unit in self.stand_ins.items():  # its ge.graph, not imported, goes right before it
            printed[sym] = "\n  ".join([*(text for s, text in unit.texts.items() if s != sym), unit.texts[sym]])
        if graph_unit is not None:
            printed[graph_unit.symbol] = graph_unit.text_with(fingerprint)
        manifest = model_manifest(store.key, fingerprint, {sym: p.fingerprint for sym, p in points.items()},
                                  variables, self.flow_key)
        lowering = job.lower(module, reuse={sym: unit.lowered for sym, unit in found.items()},
                             printed=printed, cache_manifest=manifest,
                             skeleton=None if graph_unit is None else graph_unit.skeleton)
        with job.timed("cache"):
            for sym, unit in lowering.lowered.units.items():
                held = points[sym].symbols
                store.store_unit(points[sym].fingerprint, CachedUnit(
                    unit, {s: lowering.texts[s] for s in held}, [v for v in variables if v["graph"] in held]))
            symbol = graph.sym_name.data
            text = lowering.texts[symbol]
            if graph_unit is None and self.flow_key is not None and text.count(fingerprint) == 1:
                store.store_unit(self.flow_key, CachedGraph(lowering.lowered.skeleton, symbol, text,
                                                            fingerprint, structures[symbol]))
            entry = store.store_model(fingerprint, lowering.compiled.om, variables,
                                      self.frontend.graph_key, point_keys)
        _report(job, store.settings, f"miss; stored {entry.cache_file_name}",
                {sym: p.fingerprint for sym, p in points.items()}, set(found))
        return lowering.compiled


def _process_points(module: ModuleOp) -> dict[str, _Point]:
    symbols = {op.sym_name.data: op for op in module.ops if hasattr(op, "sym_name")}
    points = {}
    for op in module.ops:
        if isinstance(op, df.FuncPpOp | df.GraphPpOp):
            references = _references(op)
            owned = [s for s in references  # a unit holds its ge.graph, never a sub-FlowGraph
                     if s in symbols and not isinstance(symbols[s], _NOT_OWNED)]
            points[op.sym_name.data] = _Point(op, fingerprint_of(op), [op.sym_name.data, *owned], references)
    return points


_NOT_OWNED = (df.FuncPpOp, df.GraphPpOp, df.FlowGraphPpOp, df.GraphOp)


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
    """A check of the module's top-level ops but `skipped`; IR errors become GeErrors."""
    def verify(module: ModuleOp) -> None:
        try:
            for op in module.ops:
                if op not in skipped:
                    op.verify()
        except VerifyException as error:
            raise GeError(str(error), "dfir.compile") from error
    return verify


def _no_verify(module: ModuleOp) -> None:
    """Between phases: the module is verified before the first and after the last."""


def _report(job: CompileJob, settings: CacheSettings, outcome: str, fingerprints: dict[str, str],
            hits: set[str]) -> None:
    """Say in the compile report and in the log (INFO, logger `dfir.cache`: a FlowGraph's first
    feed compiles with no report to show) whether the cache had the model and what it reused."""
    _log.info("compile cache: graph key %s: %s; %d of %d subgraphs reused", settings.key, outcome, len(hits),
              len(fingerprints))
    job.report.append(f"cache: graph key {settings.key}: {outcome}; {len(hits)} of {len(fingerprints)} "
                      "process points reused")
    for sym, fingerprint in fingerprints.items():
        status = "hit" if sym in hits else "miss"
        job.report.append(f"cache: @{sym} {status} {fingerprint[:len('sha256:') + 16]}")
