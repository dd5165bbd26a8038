"""What a compile shows while it runs (`dfir.compile(..., progress=True)`, `dfir compile`).

On a terminal, a tqdm bar steps through the phases (`import`, `fingerprint`, ..., `lower`) and,
while GE graphs are compiled for their backends during `lower`, a second bar counts the graphs
and names the one `auto` is measuring. Elsewhere (a pipe, a log file) nothing is drawn, and one
line sums the compile up when it ends:

    compiled seed_align in 2.41 s: import 0.10 s, fingerprint 0.01 s, ..., lower 2.20 s; 1 GE graph compiled, 1 measured by auto

A failed compile prints no summary (its error says what went wrong). `NO_PROGRESS` is the silent
reporter a compile uses without `progress=True`.
"""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence, TextIO

from tqdm import tqdm


class SilentProgress:
    """A compile's progress reporter that shows nothing."""

    def phase(self, name: str) -> None:
        """Phase `name` starts (the one before it, if any, has ended)."""

    def expect_executables(self, count: int) -> None:
        """`count` GE graphs are about to be compiled for their backends."""

    def executable_done(self, graph: str) -> None:
        """GE graph `graph` is compiled for its backend."""

    def measuring(self, graph: str) -> None:
        """`auto` starts measuring the backends of GE graph `graph`."""

    def measured(self, graph: str) -> None:
        """`auto` has chosen the backend of GE graph `graph`."""

    def from_cache(self) -> None:
        """The compile cache had the whole model."""

    @contextmanager
    def reporting(self, name: str) -> Iterator[None]:
        """Report the compile of `name` that runs in the block."""
        yield


NO_PROGRESS = SilentProgress()


class CompileProgress(SilentProgress):
    """Bars on a terminal, one summary line elsewhere, written to `stream` (stderr by default);
    `clock` gives seconds (tests give a fake one)."""

    def __init__(self, phases: Sequence[str], stream: TextIO | None = None,
                 clock: Callable[[], float] = time.perf_counter):
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock
        self.tty = self.stream.isatty()
        self.times: dict[str, float] = {}
        self.executables = 0
        self.measured_graphs = 0
        self.cached = False
        self._total = len(phases)
        self._phase: str | None = None
        self._phase_start = self._start = clock()
        self._phase_bar: tqdm | None = None
        self._executable_bar: tqdm | None = None

    def phase(self, name: str) -> None:
        self._end_phase()
        self._phase, self._phase_start = name, self.clock()
        if self.tty:
            if self._phase_bar is None:
                self._phase_bar = tqdm(total=self._total, desc="compile", unit="phase", file=self.stream,
                                       leave=False, dynamic_ncols=True, mininterval=0)
            self._phase_bar.set_postfix_str(name)

    def expect_executables(self, count: int) -> None:
        if self.tty and count:
            self._executable_bar = tqdm(total=count, desc="GE", unit="graph", file=self.stream,
                                        leave=False, dynamic_ncols=True, position=1, mininterval=0)

    def executable_done(self, graph: str) -> None:
        self.executables += 1
        if self._executable_bar is not None:
            self._executable_bar.set_postfix_str(graph, refresh=False)
            self._executable_bar.update(1)

    def measuring(self, graph: str) -> None:
        if self._executable_bar is not None:
            self._executable_bar.set_postfix_str(f"{graph}: auto measuring", refresh=True)

    def measured(self, graph: str) -> None:
        self.measured_graphs += 1

    def from_cache(self) -> None:
        self.cached = True

    @contextmanager
    def reporting(self, name: str) -> Iterator[None]:
        try:
            yield
        finally:
            self._end_phase()
            for bar in (self._executable_bar, self._phase_bar):
                if bar is not None:
                    bar.close()
        print(self.summary(name), file=self.stream, flush=True)

    def summary(self, name: str) -> str:
        """The one line that sums up the compile of `name` (after it ended)."""
        phases = ", ".join(f"{phase} {seconds:.2f} s" for phase, seconds in self.times.items())
        line = f"compiled {name} in {self.clock() - self._start:.2f} s" + (f": {phases}" if phases else "")
        if self.executables:
            line += f"; {self.executables} GE graph{'' if self.executables == 1 else 's'} compiled"
        if self.measured_graphs:
            line += f", {self.measured_graphs} measured by auto"
        if self.cached:
            line += "; the whole model from the compile cache"
        return line

    def _end_phase(self) -> None:
        if self._phase is None:
            return
        self.times[self._phase] = self.times.get(self._phase, 0.0) + self.clock() - self._phase_start
        self._phase = None
        if self._phase_bar is not None:
            self._phase_bar.update(1)
