"""`dfir trace SCRIPT.py [ARGS ...] -o run.json [--rate R]`: the script runs as `dfir exec` runs
it, its models traced, and the traces are written as one file (dfir.tools.trace_cli)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dfir.runtime.driver.trace_file import chrome_trace
from dfir.runtime.driver.trace_model import DRIVER, ModelTrace, TraceSlice, UnitTrack
from dfir.tools.cli import main
from dfir.tools.trace_cli import summary

USAGE = "usage: dfir trace SCRIPT.py [ARGS ...] -o FILE [--rate R]\n"
RATE_ERROR = ("dfir trace: error: argument --rate: must be a number above 0 and at most 1 (the share of the "
              "transactions traced, e.g. 0.1), not {!r}\n")


def dfir_trace(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dfir.tools.cli", "trace", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def marking_script(tmp_path) -> Path:
    """A script that leaves ran.txt behind if it runs."""
    return write(tmp_path / "mark.py", "open('ran.txt', 'w').close()\n")


# -- arguments ------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [[], ["a", "b"], ["a", "--rate", "0.5"]])
def test_without_an_output_the_command_stops_before_the_script_runs(argv, marking_script, tmp_path, capsys,
                                                                    monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["trace", str(marking_script), *argv])
    assert stop.value.code == 2
    assert capsys.readouterr().err == USAGE + "dfir trace: error: the following arguments are required: -o/--output\n"
    assert not (tmp_path / "ran.txt").exists()


@pytest.mark.parametrize("rate", ["0", "-0.5", "1.5", "abc", "nan", "inf", ""])
@pytest.mark.parametrize("where", ["before", "after"])
def test_a_rate_outside_0_to_1_is_refused(rate, where, marking_script, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    own = ["-o", "run.json", f"--rate={rate}"]
    argv = [*own, str(marking_script)] if where == "before" else [str(marking_script), "x", *own]
    with pytest.raises(SystemExit) as stop:
        main(["trace", *argv])
    assert stop.value.code == 2
    assert capsys.readouterr().err == USAGE + RATE_ERROR.format(rate)
    assert not (tmp_path / "ran.txt").exists() and not (tmp_path / "run.json").exists()


SHOW = """
    import json, os, sys
    print(json.dumps([sys.argv, os.environ.get("DFIR_TRACE")]))
"""


@pytest.mark.parametrize("argv, script_argv, setting", [
    (["s.py", "-o", "run.json"], ["s.py"], "on"),
    (["s.py", "a", "--flag", "-o", "run.json", "--rate", "0.25"], ["s.py", "a", "--flag"], "0.25"),
    (["s.py", "-x", "--output=run.json", "--rate=1"], ["s.py", "-x"], "on"),
    (["--rate", ".5", "-o", "run.json", "s.py", "-o", "its.json"], ["s.py", "-o", "its.json"], "0.5"),
    (["-o", "run.json", "s.py", "--rate", "2"], ["s.py", "--rate", "2"], "on"),
])
def test_options_after_the_scripts_arguments_are_dfirs_unless_given_before_it(argv, script_argv, setting,
                                                                                tmp_path):
    write(tmp_path / "s.py", SHOW)
    run = dfir_trace(*argv, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert json.loads(lines[0]) == [script_argv, setting]
    assert lines[1:] == ["no model was traced; wrote run.json with no slices"]


# -- the script's end -----------------------------------------------------------------------------

def test_a_script_that_loads_no_model_writes_a_file_with_no_slices(tmp_path):
    write(tmp_path / "s.py", "print('hello')\n")
    run = dfir_trace("s.py", "-o", "run.json", cwd=tmp_path)
    assert (run.returncode, run.stdout, run.stderr) == (
        0, "hello\nno model was traced; wrote run.json with no slices\n", "")
    assert json.loads((tmp_path / "run.json").read_text()) == chrome_trace([])


def test_a_script_that_raises_still_writes_the_trace_and_exits_1(tmp_path):
    write(tmp_path / "s.py", """
        print("before")
        raise ValueError("boom")
    """)
    run = dfir_trace("s.py", "-o", "run.json", cwd=tmp_path)
    assert run.returncode == 1
    assert run.stdout == "before\nno model was traced; wrote run.json with no slices\n"
    assert run.stderr.startswith("Traceback (most recent call last):\n")
    assert f'File "{tmp_path / "s.py"}", line 3, in <module>' in run.stderr
    assert run.stderr.endswith("ValueError: boom\n") and "trace_cli" not in run.stderr
    assert json.loads((tmp_path / "run.json").read_text()) == chrome_trace([])


@pytest.mark.parametrize("call, status, err", [("sys.exit(3)", 3, ""), ("sys.exit('gave up')", 1, "gave up\n"),
                                               ("sys.exit()", 0, "")])
def test_a_script_that_exits_writes_the_trace_and_keeps_its_status(call, status, err, tmp_path):
    write(tmp_path / "s.py", f"import sys\n{call}\n")
    run = dfir_trace("s.py", "-o", "run.json", cwd=tmp_path)
    assert (run.returncode, run.stderr) == (status, err)
    assert (tmp_path / "run.json").exists()


def test_a_missing_script_is_an_error_and_writes_nothing(tmp_path):
    run = dfir_trace("missing.py", "-o", "run.json", cwd=tmp_path)
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == "error: cannot run script 'missing.py': No such file or directory\n"
    assert not (tmp_path / "run.json").exists()


def test_a_trace_that_cannot_be_written_is_an_error_after_the_script_ran(tmp_path):
    write(tmp_path / "s.py", "print('ran')\n")
    run = dfir_trace("s.py", "-o", "no/such/folder/run.json", cwd=tmp_path)
    assert (run.returncode, run.stdout) == (1, "ran\n")
    assert run.stderr == ("error: cannot write the trace to 'no/such/folder/run.json': "
                          "No such file or directory\n")
    assert os.listdir(tmp_path) == ["s.py"]


# -- what it says it wrote ------------------------------------------------------------------------

def _trace(model: str, transactions: dict[int, int]) -> ModelTrace:
    """A trace with `count` driver slices for each transaction of `transactions`."""
    slices = [TraceSlice(DRIVER, DRIVER, "feed", t, t * 10 + k, t * 10 + k + 1)
              for t, count in transactions.items() for k in range(count)]
    return ModelTrace(model, ("host",), (UnitTrack("a", 0, 0),), slices)


@pytest.mark.parametrize("traces, said", [
    ([_trace("m", {1: 3, 2: 2, 0: 1})], "wrote 6 slices and 2 flows of 1 model to run.json"),
    ([_trace("m", {1: 1})], "wrote 1 slice and 0 flows of 1 model to run.json"),
    ([_trace("m", {1: 2}), _trace("n", {1: 2, 2: 1})], "wrote 5 slices and 2 flows of 2 models to run.json"),
    ([_trace("m", {})], "wrote 0 slices and 0 flows of 1 model to run.json"),
    ([], "no model was traced; wrote run.json with no slices"),
])
def test_the_summary_counts_slices_flow_chains_and_models(traces, said):
    assert summary(traces, "run.json") == said
    events = chrome_trace(traces)["traceEvents"]
    if traces:  # its flows are the file's chains: one "s" each
        assert said.split()[4] == str(sum(e["ph"] == "s" for e in events))


# -- a real pipeline ------------------------------------------------------------------------------

PIPELINE = """
    import json, os
    import numpy as np
    import dfir.dataflow as df

    DEPLOY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deploy.json")
    with open(DEPLOY, "w") as out:
        json.dump({"batch_deploy_info": [
            {"flow_node_list": ["a"], "logic_device_list": "0:0:0:0"},
            {"flow_node_list": ["b"], "logic_device_list": "0:0:0:0,0:0:1:0"},
            {"flow_node_list": ["c"], "logic_device_list": "0:0:1:0"}]}, out)

    @df.pyflow
    def add_one(x):
        return x + 1

    @df.pyflow
    def double(x):
        return x * 2

    @df.pyflow
    def negate(x):
        return -x

    x = df.FlowData(name="x")
    y = negate.fnode(name="c")(double.fnode(name="b")(add_one.fnode(name="a")(x)))
    graph = df.FlowGraph([y], {"ge.experiment.data_flow_deploy_info_path": DEPLOY}, name="traced")
    for i in range(COUNT):
        assert graph.feed_data({x: np.full([2], i, np.int32)}) == 0
    results = []
    for i in range(COUNT):
        outputs, info, ret = graph.fetch_data(timeout=60_000)
        assert ret == 0, ret
        results.append(outputs[0].numpy().tolist())
    assert sorted(results, reverse=True) == [[-2 * (i + 1)] * 2 for i in range(COUNT)]
    df.finalize()
"""
COUNT = 4


def test_dfir_trace_writes_the_slices_of_a_real_pipeline(tmp_path):
    write(tmp_path / "pipeline.py", PIPELINE.replace("COUNT", str(COUNT)))
    run = dfir_trace("pipeline.py", "-o", "run.json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"wrote {5 * COUNT} slices and {COUNT} flows of 1 model to run.json\n"
    trace = json.loads((tmp_path / "run.json").read_text())
    assert trace["otherData"]["models"] == ["traced"]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
    assert sorted(threads.values()) == ["feed/fetch", "node 'a' instance 0", "node 'b' instance 0",
                                        "node 'b' instance 1", "node 'c' instance 0"]
    b_processes = {pid for (pid, _), name in threads.items() if name.startswith("node 'b'")}
    assert len(b_processes) == 2  # the replicas run on the two devices
    slices: dict[int, list[dict]] = {}
    for event in trace["traceEvents"]:
        if event["ph"] == "X":
            slices.setdefault(event["args"]["transaction_id"], []).append(event)
    assert len(slices) == COUNT
    b_instances = set()
    for transaction, events in slices.items():
        events.sort(key=lambda e: (e["ts"], e["pid"], e["tid"]))
        names = [e["name"] for e in events if e["cat"] == "node"]
        assert sorted(e["name"] for e in events if e["cat"] == "driver") == ["feed", "fetch"]
        assert len(names) == 3
        assert names[0] == "node 'a' instance 0" and names[2] == "node 'c' instance 0"
        b_instances.add(names[1])
        flows = [e for e in trace["traceEvents"] if e["ph"] in ("s", "t", "f") and e["id"] == transaction]
        chain = [next(e for e in events if e["name"] == "feed")] + [e for e in events if e["cat"] == "node"] + \
            [next(e for e in events if e["name"] == "fetch")]  # a fetch may begin before the nodes: it ends the chain
        assert [(e["ph"], e["pid"], e["tid"], e["ts"]) for e in flows] == [
            (phase, e["pid"], e["tid"], e["ts"] if phase != "f" else round(e["ts"] + e["dur"], 3))
            for phase, e in zip("stttf", chain)]
    assert b_instances == {"node 'b' instance 0", "node 'b' instance 1"}


# -- dfir inspect --stats -------------------------------------------------------------------------

def stats_trace(path: Path) -> Path:
    """Node a: 3 calls of 1, 2 and 7 ms, taking 1000, 2000 and 3000 bytes and putting 2048 each;
    node b: instance 0 one call of 4 ms (2048 bytes in, 10 out), instance 1 one of 6 ms (2048 in,
    3 MiB out)."""
    units = (UnitTrack("a", 0, 0), UnitTrack("b", 0, 0), UnitTrack("b", 1, 1))
    ms = 1_000_000
    slices = [TraceSlice(0, 0, units[0].label, t, 10 * t * ms, (10 * t + d) * ms, 1000 * t, 2048)
              for t, d in ((1, 1), (2, 2), (3, 7))]
    slices += [TraceSlice(0, 1, units[1].label, 1, 50 * ms, 54 * ms, 2048, 10),
               TraceSlice(1, 2, units[2].label, 2, 60 * ms, 66 * ms, 2048, 3 << 20),
               TraceSlice(DRIVER, DRIVER, "feed", 1, 0, ms, 0, 1000)]
    path.write_text(json.dumps(chrome_trace([ModelTrace("m", ("host", "0:0:1"), units, slices)])))
    return path


def test_dfir_inspect_stats_prints_each_node_s_calls_and_times_from_a_trace(tmp_path, capsys):
    path = stats_trace(tmp_path / "run.json")
    assert main(["inspect", "--stats", str(path)]) == 0
    assert capsys.readouterr().out == (
        f"trace {path}, model 'm': 5 node slices, 20.000 ms in nodes\n"
        "node                     instance   calls   total ms    p50 ms    p99 ms    max ms  share   bytes in  bytes out\n"
        "a                             all       3     10.000     2.000     7.000     7.000  50.0%    5.9 KiB    6.0 KiB\n"
        "b                             all       2     10.000     4.000     6.000     6.000  50.0%    4.0 KiB    3.0 MiB\n"
        "                                0       1      4.000     4.000     4.000     4.000           2.0 KiB       10 B\n"
        "                                1       1      6.000     6.000     6.000     6.000           2.0 KiB    3.0 MiB\n")


def test_dfir_inspect_trace_model_without_stats_is_an_error(tmp_path, capsys):
    assert main(["inspect", "--trace-model", "m", str(stats_trace(tmp_path / "run.json"))]) == 1
    assert capsys.readouterr().err == "error: --trace-model is for --stats: it picks a model of a trace file\n"
