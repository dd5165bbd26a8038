"""`auto` that measures: the backend of a GE graph `auto` chose for is the fastest one that runs it
correctly on this machine, timed when the graph is lowered.

For a graph `convert-ge-to-linalg` marked `auto`, `MeasuringChooser`:

1. lists the candidates (`dfir.lowering.ge_executable.candidates`: IREE's CPU variants when the
   graph lowers, and onnxruntime) and builds each; one that fails to build or to load is
   dropped with its reason;
2. draws inputs from the graph's input ranges (each dimension at its lower bound, at least 1;
   normal floats, integers 0 and 1, random booleans; a fixed seed) and runs the reference
   kernels on them once;
3. runs every candidate on the same inputs, in a forked child process: one whose outputs differ from the reference's
   (dtype, shape, or values beyond `TOLERANCE` of the reference's largest magnitude) is dropped
   with the difference, since flag sets can miscompile;
4. times the rest in rounds, one call of each per round, until `MAX_ROUNDS` rounds or
   `TIME_BUDGET_S` seconds (at least `MIN_ROUNDS`), and keeps the one with the lowest mean time
   per call, its slowest tenth of calls left out (`_expected_seconds`).

Only when no candidate is left does the reference backend run the graph. What was measured is one
line, in the compile report, on the graph (its `auto` attribute) and in its plan entry, which
`dfir inspect` shows:

    onnxruntime 1.21 ms; iree-cpu/tiled 2.30 ms; iree-cpu 4.02 ms

A measurement is a fact about this machine and this graph, and `.om` files stay deterministic:
each choice is remembered in a directory of this machine (`DFIR_AUTO_STORE`, else
`$XDG_CACHE_HOME/dfir/auto`, else `~/.cache/dfir/auto`), one JSON file per graph fingerprint
(which the compile's options, dfir's version and this CPU salt), thread count and candidate
list, so compiling the same graph again here gives the same choice, the same line and the same
bytes without measuring. The choice is also part of the graph's lowered unit, so the compile
cache keeps it. An explicit backend is never measured.
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import signal
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import StringAttr

from dfir.core import data_type as dt
from dfir.core.backends import REFERENCE
from dfir.core.errors import GeError
from dfir.dialects import ge
from dfir.driver.progress import NO_PROGRESS, SilentProgress
from dfir.lowering.ge_executable import (DEFAULT_VARIANT, GraphCode, candidate_label, candidates, compile_graph,
                                         output_dtypes)
from dfir.lowering.plan import AutoChoice
from dfir.om.plan import WEIGHT_ALIGNMENT, Executable, GeGraph, GeInput, Weight
from dfir.passes.fingerprint_subgraphs import FINGERPRINT_ATTR
from dfir.runtime.ge.graph_runner import GeGraphRunner, available_cores
from dfir.runtime.worker.host import load_ge_runner

__all__ = ["AUTO_STORE_ENV", "MeasuringChooser", "drawn_inputs", "disagreement", "store_directory"]

AUTO_STORE_ENV = "DFIR_AUTO_STORE"
"""The directory where `auto` remembers its choices (default: the user's cache directory)."""

TIME_BUDGET_S = 2.0
MAX_ROUNDS = 20
MIN_ROUNDS = 3
CHILD_TIMEOUT_S = 600
"""How long the measuring child may take for one graph before every candidate is dropped."""
TOLERANCE = 1e-3
"""How far a candidate's floats may be from the reference's, relative to their largest magnitude."""
_SEED = 20261205
_METHOD = 2
"""How candidates are ranked (2: by mean time per call without the slowest tenth; 1: by median):
part of a remembered choice's key, so a choice ranked another way is measured again."""
_REASON_CHARS = 200


class MeasuringChooser:
    """The `GeBuild.choose` of a compile: measures the candidates of each graph `auto` marked.
    Each choice appends a line to `report`; `progress` is told when a graph's measuring starts
    and ends."""

    def __init__(self, threads: int | None, report: list[str], progress: SilentProgress = NO_PROGRESS):
        self.threads = threads
        self.report = report
        self.progress = progress

    def __call__(self, graph_op: ge.GraphOp, entry: GeGraph, arrays: list[np.ndarray]) -> AutoChoice:
        name = graph_op.sym_name.data
        fallback = graph_op.backend.data if graph_op.backend is not None else REFERENCE
        options = candidates(graph_op, fallback)
        if len(options) == 1 and options[0][0] == fallback:
            choice, how = AutoChoice(fallback, DEFAULT_VARIANT, f"{fallback}: the only backend that runs it here"), ""
        else:
            choice, how = self._remembered_or_measured(graph_op, entry, arrays, options)
        label = candidate_label(choice.backend, choice.variant)
        self.report.append(f"auto: @{name} {label} ({choice.measured}){how}")
        return choice

    def _remembered_or_measured(self, graph_op: ge.GraphOp, entry: GeGraph, arrays: list[np.ndarray],
                                options: list[tuple[str, str]]) -> tuple[AutoChoice, str]:
        key = _store_key(graph_op, self.threads, options)
        remembered = _recall(key) if key is not None else None
        if remembered is not None:
            return remembered, "; measured before on this machine"
        self.progress.measuring(graph_op.sym_name.data)
        choice = _Measurement(graph_op, entry, arrays, self.threads).choice(options)
        self.progress.measured(graph_op.sym_name.data)
        if key is not None:
            _remember(key, choice)
        return choice, ""


class _Measurement:
    """One graph's candidates built here, then checked against the reference kernels and timed in
    a forked child process (`_measured`): devices and thread pools that IREE and onnxruntime
    start do not survive a fork, so the compiling process, which may fork a model's workers
    next, never starts any; and a candidate that crashes takes only the child with it."""

    def __init__(self, graph_op: ge.GraphOp, entry: GeGraph, arrays: list[np.ndarray], threads: int | None):
        self.graph_op = graph_op
        self.entry = entry
        self.local, self.weights = _packed(replace(entry, threads=threads), arrays)
        self.dropped: dict[str, str] = {}

    def choice(self, options: Sequence[tuple[str, str]]) -> AutoChoice:
        codes = {}
        # IREE compiles in a process of its own: the candidates build side by side, one per core
        with ThreadPoolExecutor(max_workers=min(len(options), available_cores())) as pool:
            for option, built in zip(options, pool.map(self._built, options)):
                if isinstance(built, GraphCode):
                    codes[candidate_label(*option)] = built
                else:
                    self.dropped[candidate_label(*option)] = built
        try:
            seconds, problems = _in_child(_measured, self._runnable_entry(), self.weights, codes) if codes else ({}, {})
        except _NotMeasured as failure:
            return self._unmeasured(str(failure))
        self.dropped.update(problems)
        ranked = sorted(seconds, key=seconds.get)
        parts = [f"{label} {seconds[label] * 1e3:.3g} ms" for label in ranked]
        parts += [f"{label} dropped: {why}" for label, why in self.dropped.items()]
        if not ranked:
            return AutoChoice(REFERENCE, DEFAULT_VARIANT, "; ".join([f"{REFERENCE}: nothing else runs it", *parts]))
        fastest = codes[ranked[0]]
        return AutoChoice(fastest.backend, fastest.variant, "; ".join(parts))

    def _unmeasured(self, why: str) -> AutoChoice:
        """The pass's own pick, when the candidates could not be measured (`why`)."""
        backend = self.graph_op.backend.data if self.graph_op.backend is not None else REFERENCE
        return AutoChoice(backend, DEFAULT_VARIANT, f"{backend}: not measured: {why}")

    def _built(self, option: tuple[str, str]) -> GraphCode | str:
        """The candidate's code, or why it could not be built."""
        try:
            return compile_graph(self.graph_op, self.entry, *option)
        except GeError as error:
            return _short(error.error_message)

    def _runnable_entry(self) -> GeGraph:
        return replace(self.local, output_dtypes=output_dtypes(self.graph_op))


def _measured(entry: GeGraph, weights: memoryview, codes: dict[str, GraphCode]) -> tuple[dict, dict]:
    """(seconds per call by label, why by label dropped) of the candidates `codes` of `entry`."""
    inputs = drawn_inputs(entry.inputs, np.random.default_rng(_SEED))
    try:
        expected = GeGraphRunner(entry, weights).run(inputs)
    except GeError as error:
        raise _NotMeasured(f"the reference kernels cannot run inputs drawn from its shape ranges: "
                           f"{_short(error.error_message)}") from None
    runners, dropped = {}, {}
    for label, code in codes.items():
        try:
            runner = _runner(entry, weights, code)
            problem = disagreement(runner.run(inputs), expected)
        except Exception as error:  # whatever a backend raises drops only that candidate
            problem = _short(error.error_message if isinstance(error, GeError) else f"{type(error).__name__}: {error}")
        if problem is None:
            runners[label] = runner
        else:
            dropped[label] = problem
    return _timed(runners, inputs), dropped


def _runner(entry: GeGraph, weights: memoryview, code: GraphCode):
    meta = Executable(0, code.backend, code.target, code.sha256, len(code.code))
    return load_ge_runner(replace(entry, backend=code.backend, executable=0, external_weights=code.external_weights),
                          weights, [(meta, code.code)])


class _NotMeasured(Exception):
    """The candidates of a graph could not be measured at all; says why."""


def _in_child(work: Callable, *args):
    """`work(*args)` run in a forked child process, its result sent back through a pipe; a
    `_NotMeasured` when the child raises, dies or runs past CHILD_TIMEOUT_S."""
    reader, writer = multiprocessing.get_context("fork").Pipe(duplex=False)
    pid = os.fork()
    if pid == 0:  # the child: measure, send, and leave without running the parent's exit handlers
        code = 0
        try:
            writer.send({"result": work(*args)})
        except BaseException as error:  # anything: the parent must hear back
            why = str(error) if isinstance(error, _NotMeasured) else f"{type(error).__name__}: {error}"
            writer.send({"error": why})
            code = 1
        finally:
            os._exit(code)
    writer.close()
    try:
        sent = reader.recv() if reader.poll(CHILD_TIMEOUT_S) else {"error": f"no result in {CHILD_TIMEOUT_S} s"}
    except EOFError:
        sent = {"error": "the measuring process died"}
    finally:
        reader.close()
        _reaped(pid)
    if "error" in sent:
        raise _NotMeasured(_short(sent["error"]))
    return sent["result"]


def _reaped(pid: int) -> None:
    """Wait for child `pid`, killing it first if it is still running."""
    done, _ = os.waitpid(pid, os.WNOHANG)
    if done == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def store_directory() -> Path:
    """Where `auto` remembers what it measured on this machine."""
    if os.environ.get(AUTO_STORE_ENV):
        return Path(os.environ[AUTO_STORE_ENV])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "dfir" / "auto"


def _store_key(graph_op: ge.GraphOp, threads: int | None, options: list[tuple[str, str]]) -> str | None:
    """The file name a choice for this graph is remembered under; None for a graph the
    `fingerprint` phase did not key (lowering called on its own), which is always measured."""
    fingerprint = graph_op.attributes.get(FINGERPRINT_ATTR)
    if not isinstance(fingerprint, StringAttr):
        return None
    text = json.dumps([fingerprint.data, threads, options, _METHOD])
    return hashlib.sha256(text.encode()).hexdigest()


def _recall(key: str) -> AutoChoice | None:
    try:
        with open(store_directory() / f"{key}.json", encoding="utf-8") as file:
            stored = json.load(file)
        return AutoChoice(stored["backend"], stored["variant"], stored["measured"])
    except (OSError, ValueError, KeyError, TypeError):  # none yet, or unreadable: measure again
        return None


def _remember(key: str, choice: AutoChoice) -> None:
    """Write the choice atomically; a store that cannot be written only costs a measurement later."""
    directory = store_directory()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=directory, suffix=".tmp", delete=False, encoding="utf-8") as file:
            json.dump({"backend": choice.backend, "variant": choice.variant, "measured": choice.measured}, file)
        os.replace(file.name, directory / f"{key}.json")
    except OSError:
        pass


def _timed(runners: dict, inputs: list[np.ndarray]) -> dict[str, float]:
    """The expected seconds per call of each runner (`_expected_seconds`), timed in interleaved
    rounds."""
    times: dict[str, list[float]] = {label: [] for label in runners}
    start = time.perf_counter()
    for round_ in range(MAX_ROUNDS):
        if round_ >= MIN_ROUNDS and time.perf_counter() - start > TIME_BUDGET_S:
            break
        for label, runner in runners.items():
            began = time.perf_counter()
            runner.run(inputs)
            times[label].append(time.perf_counter() - began)
    return {label: _expected_seconds(samples) for label, samples in times.items() if samples}


def _expected_seconds(samples: Sequence[float]) -> float:
    """The mean of `samples` without their slowest tenth.

    A pipeline's throughput follows a node's mean time per call, not its median: IREE's threaded
    driver runs GPT-2 at 2 threads in 4.5 ms on most calls and 6-9 ms on about a third of them
    (mean 5.0 ms), where onnxruntime runs 4.6 ms on every call, so the median picked the slower
    backend. The slowest tenth is left out as the machine's noise (another process woke up), which
    would otherwise decide between close candidates.
    """
    kept = sorted(samples)[:len(samples) - len(samples) // 10]
    return statistics.fmean(kept)


def drawn_inputs(descs: Sequence[GeInput], rng: np.random.Generator) -> list[np.ndarray]:
    """One input per desc, of its dtype, each dimension at its lower bound (at least 1)."""
    return [_drawn(desc, rng) for desc in descs]


def _drawn(desc: GeInput, rng: np.random.Generator) -> np.ndarray:
    dtype = dt.to_numpy(dt.from_name(desc.dtype))
    shape = tuple(lo if lo == hi else max(lo, 1) for lo, hi in desc.ranges)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(0, 2, shape).astype(dtype)


def disagreement(got: Sequence[np.ndarray], want: Sequence[np.ndarray]) -> str | None:
    """How `got` differs from the reference's `want`, or None when it agrees."""
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for index, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"output {index} is {g.dtype} {list(g.shape)}, expected {w.dtype} {list(w.shape)}"
        if w.dtype.kind in "fc":
            finite = np.isfinite(w)
            if not np.array_equal(finite, np.isfinite(g)):
                return f"output {index} has non-finite values where the reference has none, or the reverse"
            scale = float(np.max(np.abs(w[finite]), initial=0.0))
            error = float(np.max(np.abs(g[finite] - w[finite]), initial=0.0))
            if error > TOLERANCE * max(scale, 1.0):
                return f"output {index} differs by up to {error:.3g} (largest magnitude {scale:.3g})"
        elif not np.array_equal(g, w):
            return f"output {index} differs in {int(np.count_nonzero(g != w))} elements"
    return None


def _packed(entry: GeGraph, arrays: list[np.ndarray]) -> tuple[GeGraph, memoryview]:
    """`entry` with its weights packed into a buffer of their own, and that buffer."""
    blob, weights = bytearray(), []
    for array in arrays:
        blob.extend(b"\0" * (-len(blob) % WEIGHT_ALIGNMENT))
        weights.append(Weight(len(blob), int(array.nbytes), dt.from_numpy(array.dtype).name, tuple(array.shape)))
        blob.extend(np.ascontiguousarray(array).tobytes())
    return replace(entry, weights=tuple(weights)), memoryview(bytes(blob))


def _short(message: str) -> str:
    """An error's first line, at most `_REASON_CHARS` long, for a one-line report."""
    line = message.strip().splitlines()[0] if message.strip() else message
    return line if len(line) <= _REASON_CHARS else line[:_REASON_CHARS - 3] + "..."
