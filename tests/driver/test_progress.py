"""A compile's progress: one summary line off a terminal, bars over the phases and IREE's GE graphs
on one (a real pseudo-terminal for `dfir compile`), nothing without `progress=True`."""
from __future__ import annotations

import fcntl
import io
import itertools
import os
import pty
import re
import struct
import sys
import termios
import textwrap

import pytest

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.driver.pipeline import PHASE_NAMES
from dfir.driver.progress import CompileProgress
from dfir.ge.error import GeError
from dfir.ge.graph import Graph

PHASES = r"import {t}, fingerprint {t}, schedule {t}, shapes {t}, plan {t}, codegen {t}, place {t}, lower {t}"
SECONDS = r"\d+\.\d\d s"


class TerminalStream(io.StringIO):
    """A stream that says it is a terminal, as stderr in a console does."""

    def isatty(self) -> bool:
        return True


def ticking_clock(step: float = 0.25):
    """A clock that moves `step` seconds each time it is read."""
    ticks = itertools.count()
    return lambda: next(ticks) * step


def adder(name: str = "adder") -> df.FlowGraph:
    @df.pyflow
    def add(a, b):
        return a + b
    x, y = df.FlowData(name="x"), df.FlowData(name="y")
    return df.FlowGraph([add.fnode()(x, y)], name=name)


def tiny_net() -> Graph:
    g = Graph("tiny")
    x = g.data(0, shape=[2, 3], dtype=dt.DT_FLOAT, name="x")
    g.set_outputs([g.relu(x)])
    return g


def test_the_summary_line_off_a_terminal():
    stream = io.StringIO()
    progress = CompileProgress(["import", "plan", "lower"], stream, clock=ticking_clock())
    with progress.reporting("demo"):
        for phase in ("import", "plan", "lower"):
            progress.phase(phase)
        progress.expect_executables(2)
        progress.executable_done("a")
        progress.executable_done("b")
    # the clock is read at the start, at each phase's start and end, and for the total
    assert stream.getvalue() == ("compiled demo in 1.75 s: import 0.25 s, plan 0.25 s, lower 0.25 s; "
                                 "2 GE graphs compiled\n")


def test_a_terminal_gets_bars_that_are_cleared_and_the_summary():
    stream = TerminalStream()
    progress = CompileProgress(["import", "lower"], stream, clock=ticking_clock())
    with progress.reporting("demo"):
        progress.phase("import")
        progress.phase("lower")
        progress.expect_executables(1)
        progress.executable_done("mlp")
    text = stream.getvalue()
    assert re.search(r"compile: +0%.*0/2.*import", text) and re.search(r"compile: +50%.*1/2.*lower", text)
    assert re.search(r"GE: +100%.*1/1.*mlp", text)
    assert text.endswith("\rcompiled demo in 1.25 s: import 0.25 s, lower 0.25 s; 1 GE graph compiled\n")


def test_a_failed_compile_closes_its_bars_and_prints_no_summary():
    stream = TerminalStream()
    progress = CompileProgress(["import"], stream, clock=ticking_clock())
    with pytest.raises(GeError, match="broken"), progress.reporting("demo"):
        progress.phase("import")
        raise GeError("broken")
    assert "compiled" not in stream.getvalue() and progress._phase_bar.disable  # closed


def test_dfir_compile_with_progress_prints_one_line_per_compile(capsys):
    dfir.compile(adder(), progress=True)
    err = capsys.readouterr().err
    assert re.fullmatch(rf"compiled adder in {SECONDS}: {PHASES.format(t=SECONDS)}\n", err), err
    dfir.compile(adder("quiet"))
    assert capsys.readouterr().err == ""


def test_the_summary_names_only_the_phases_run(capsys):
    dfir.compile(adder(), stop_after="shapes", progress=True)
    phases = ", ".join(f"{p} {SECONDS}" for p in PHASE_NAMES[:PHASE_NAMES.index("shapes") + 1])
    assert re.fullmatch(rf"compiled adder in {SECONDS}: {phases}\n", capsys.readouterr().err)


def test_iree_graphs_are_counted(capsys):
    dfir.compile(tiny_net(), {"dfir.ge.backend": "iree-cpu"}, progress=True)
    err = capsys.readouterr().err
    assert re.fullmatch(rf"compiled tiny in {SECONDS}: {PHASES.format(t=SECONDS)}; 1 GE graph compiled\n",
                        err), err


def test_a_model_from_the_compile_cache_says_so(tmp_path, capsys):
    options = {"ge.graph_compiler_cache_dir": str(tmp_path), "ge.graph_key": "progress"}
    graph = adder()
    dfir.compile(graph, options, progress=True)
    # the cache skips the phases that act on no op of the graph (it has no GE graph)
    assert re.fullmatch(rf"compiled adder in {SECONDS}: import {SECONDS}, fingerprint {SECONDS}, "
                        rf"schedule {SECONDS}, place {SECONDS}, lower {SECONDS}\n", capsys.readouterr().err)
    dfir.compile(graph, options, progress=True)
    # found by the graph's frontend keys, before any phase runs
    assert re.fullmatch(rf"compiled adder in {SECONDS}; the whole model from the compile cache\n",
                        capsys.readouterr().err)


def run_in_terminal(argv: list[str], cwd) -> str:
    """What `argv` writes to a pseudo-terminal of 120 columns, run in `cwd`."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its stdin, stdout and stderr are the terminal
        os.chdir(cwd)
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, b"".join(chunks)
    return b"".join(chunks).decode()


def test_dfir_compile_on_a_terminal_draws_the_phases_and_iree_graphs(tmp_path):
    (tmp_path / "net.py").write_text(textwrap.dedent("""
        import dfir.data_type as dt
        from dfir.ge.graph import Graph

        net = Graph("net")
        x = net.data(0, shape=[2, 3], dtype=dt.DT_FLOAT, name="x")
        net.set_outputs([net.relu(x)])
    """))
    dfir_cli = os.path.join(os.path.dirname(sys.executable), "dfir")
    text = run_in_terminal([dfir_cli, "compile", "net.py", "-o", "net.om", "--option", "dfir.ge.backend=iree-cpu"],
                           tmp_path)
    for index, phase in enumerate(PHASE_NAMES):
        assert re.search(rf"\rcompile: +\d+%\|[^\r]*\| {index}/8 \[[^\r]*, {phase}\]", text), (phase, text)
    assert re.search(r"\rGE: +100%\|[^\r]*\| 1/1 \[[^\r]*, net\]", text), text
    lines = text.replace("\r\n", "\n").split("\n")
    summary = [line.rpartition("\r")[2] for line in lines if "compiled net in" in line]
    assert len(summary) == 1 and re.fullmatch(
        rf"compiled net in {SECONDS}: {PHASES.format(t=SECONDS)}; 1 GE graph compiled", summary[0])
    assert lines[-2:] == ["wrote net.om", ""]
    assert (tmp_path / "net.om").read_bytes()[:4] == b"IMOD"
