"""`dfir view --trace`: the per-node times read from a trace file (dfir.tools.trace_times), the colours,
numbers and legend they put on the drawing and the page, each error, and the page in headless
Chromium. The traces are written here by hand, following the trace file contract (docs/tracing.md):
node slices among driver slices, flow events, counters and metadata, the pids of several models."""
from __future__ import annotations

import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dfir.core.errors import GeError
from dfir.lowering.om_writer import write_bundle
from dfir.tools.cli import main as cli
from dfir.tools.view import view
from dfir.tools.view.layout import scale_colour
from dfir.tools.trace_times import Call, Durations, nearest_rank, read_trace_times
from test_view import ADDER, PLACED, SVG  # PLACED: scatter_fnode, mlp_node x2, gather_fnode, post
XLINK_TITLE = "{http://www.w3.org/1999/xlink}title"
PIDS_PER_MODEL = 1024

# (node, instance, worker, slice durations in microseconds) of the placed pipeline: 2 ms in nodes
PLACED_RUN = [("scatter_fnode", 0, -1, [100.0]), ("mlp_node", 0, 0, [300.0, 500.0]),
              ("mlp_node", 1, 1, [100.0]), ("post", 0, -1, [1000.0])]


def trace_events(model_index: int, units: list[tuple[str, int, int, list[float]]]) -> list[dict]:
    """One model's events as the trace writer lays them out: process and thread names, a node
    slice per duration (each its own transaction), the driver's feed and fetch, a flow chain
    and a counter. Worker -1 here is the host worker, 0, 1, ... the devices."""
    driver = 1 + model_index * PIDS_PER_MODEL
    events = [{"ph": "M", "name": "process_name", "pid": driver, "args": {"name": "m driver"}},
              {"ph": "M", "name": "thread_name", "pid": driver, "tid": 0, "args": {"name": "feed/fetch"}},
              {"ph": "X", "cat": "driver", "name": "feed", "pid": driver, "tid": 0, "ts": 0.0, "dur": 9999.0}]
    ts = 10.0
    for unit, (node, instance, worker, durations) in enumerate(units):
        pid = driver + worker + 2
        label = f"node '{node}' instance {instance}"
        events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": unit + 1, "args": {"name": label}})
        for transaction, dur in enumerate(durations, start=1):
            events.append({"ph": "X", "cat": "node", "name": label, "pid": pid, "tid": unit + 1,
                           "ts": ts, "dur": dur, "args": {"transaction_id": transaction}})
            ts += dur + 1.0
    events += [{"ph": "s", "cat": "transaction", "name": "transaction 1", "id": model_index * 2**40 + 1,
                "pid": driver + 1, "tid": 1, "ts": 10.0, "bp": "e"},
               {"ph": "f", "cat": "transaction", "name": "transaction 1", "id": model_index * 2**40 + 1,
                "pid": driver + 1, "tid": 2, "ts": ts, "bp": "e"},
               {"ph": "X", "cat": "driver", "name": "fetch", "pid": driver, "tid": 0, "ts": ts, "dur": 5000.0},
               {"ph": "C", "name": "arena bytes in use", "pid": driver, "ts": ts, "args": {"value": 64}}]
    return events


def write_trace(path: Path, models: dict[str, list[tuple[str, int, int, list[float]]]]) -> Path:
    events = [event for index, units in enumerate(models.values()) for event in trace_events(index, units)]
    path.write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ms",
                                "otherData": {"dfir_trace": 1, "models": list(models), "clock_origin_ns": 5}}))
    return path


def scene_data(page: Path) -> dict:
    text = page.read_text()
    return json.loads(re.search(r'<script type="application/json" id="dfir-scene">(.*?)</script>', text, re.DOTALL)[1])


# -- the times -----------------------------------------------------------------------------------

def test_percentiles_are_nearest_rank():
    hundred = [float(v) for v in range(1, 101)]
    assert [nearest_rank(hundred, p) for p in (1, 50, 99, 100)] == [1.0, 50.0, 99.0, 100.0]
    assert [nearest_rank([10.0, 20.0, 30.0], p) for p in (50, 99)] == [20.0, 30.0]
    assert [nearest_rank([1.0, 2.0, 3.0, 4.0], p) for p in (50, 99)] == [2.0, 4.0]
    assert nearest_rank([7.0], 99) == 7.0
    calls = [Call(300.0, 8, 0), Call(100.0, 8, 16), Call(200.0, 0, 0), Call(400.0, 8, 0)]
    assert Durations.of(calls) == Durations(4, 1.0, 0.2, 0.4, 0.4, 24, 16)


def test_node_times_sum_instances_and_give_each_its_share(tmp_path):
    path = write_trace(tmp_path / "run.json", {"m": [("a", 0, 0, [100.0, 200.0, 300.0]), ("a", 1, 1, [400.0]),
                                                      ("b", 0, -1, [1000.0, 3000.0])]})
    times = read_trace_times(str(path))
    assert (times.model, times.slices, times.total_ms, times.top_share) == ("m", 6, 5.0, 0.8)
    assert list(times.nodes) == ["b", "a"]  # the most time first
    a, b = times.nodes["a"], times.nodes["b"]
    assert (a.share, a.times) == (0.2, Durations(4, 1.0, 0.2, 0.4, 0.4))
    assert a.instances == {0: Durations(3, 0.6, 0.2, 0.3, 0.3), 1: Durations(1, 0.4, 0.4, 0.4, 0.4)}
    assert (b.share, b.times, list(b.instances)) == (0.8, Durations(2, 4.0, 1.0, 3.0, 3.0), [0])


def test_a_trace_of_several_models_counts_the_one_picked(tmp_path):
    path = write_trace(tmp_path / "two.json", {"first": [("a", 0, 0, [100.0])],
                                               "second": [("a", 0, 0, [250.0, 750.0]), ("z", 0, 1, [1000.0])]})
    second = read_trace_times(str(path), "second")
    assert (second.model, second.slices, second.total_ms) == ("second", 3, 2.0)
    assert {name: node.times.calls for name, node in second.nodes.items()} == {"z": 1, "a": 2}
    assert read_trace_times(str(path), "first").nodes["a"].times == Durations(1, 0.1, 0.1, 0.1, 0.1)
    with pytest.raises(GeError, match=rf"^trace '{re.escape(str(path))}' holds 2 models \('first', 'second'\); "
                                      r"choose one with --trace-model NAME$"):
        read_trace_times(str(path))
    with pytest.raises(GeError, match=rf"^trace '{re.escape(str(path))}' holds no model 'third'; "
                                      r"it holds 'first', 'second'$"):
        read_trace_times(str(path), "third")


def test_the_trace_writers_file_reads_back(tmp_path):
    """The file the runtime writes: two models, the second's node on a device worker and the host."""
    from dfir.runtime.driver.trace_file import write_trace as write_runtime_trace
    from dfir.runtime.driver.trace_model import DRIVER, ModelTrace, TraceSlice, UnitTrack

    ms = 1_000_000  # nanoseconds
    units = (UnitTrack("pre", 0, 0), UnitTrack("mlp", 0, 1), UnitTrack("mlp", 1, 0))
    pieces = [TraceSlice(DRIVER, DRIVER, "feed", 1, 0, 50 * ms),
              TraceSlice(0, 0, "node 'pre' instance 0", 1, 60 * ms, 61 * ms + ms // 2),
              TraceSlice(1, 1, "node 'mlp' instance 0", 1, 62 * ms, 68 * ms),
              TraceSlice(0, 2, "node 'mlp' instance 1", 2, 63 * ms, 65 * ms)]
    first = ModelTrace("first", ("host",), (UnitTrack("pre", 0, 0),),
                       [TraceSlice(0, 0, "node 'pre' instance 0", 1, 10 * ms, 90 * ms)])
    path = tmp_path / "run.json"
    write_runtime_trace(path, [first, ModelTrace("second", ("host", "0:0:1"), units, pieces)])
    times = read_trace_times(str(path), "second")
    assert (times.slices, times.total_ms) == (3, 9.5)
    assert times.nodes["mlp"].instances == {0: Durations(1, 6.0, 6.0, 6.0, 6.0), 1: Durations(1, 2.0, 2.0, 2.0, 2.0)}
    assert times.nodes["pre"].times == Durations(1, 1.5, 1.5, 1.5, 1.5)


def test_a_trace_that_names_no_models_counts_every_node_slice(tmp_path):
    path = tmp_path / "plain.json"
    events = trace_events(0, [("a", 0, 0, [100.0])]) + trace_events(1, [("a", 0, 0, [300.0])])
    path.write_text(json.dumps({"traceEvents": events}))
    times = read_trace_times(str(path))
    assert (times.model, times.nodes["a"].times) == (None, Durations(2, 0.4, 0.1, 0.3, 0.3))


@pytest.mark.parametrize("content, message", [
    (b"{\"traceEvents\": [", "'{path}' is not a trace: it is not JSON (Expecting value at line 1 column 18)"),
    (b"\x80\x81 binary", "'{path}' is not a trace: it is not JSON (not UTF-8 text)"),
    (b"[]", "'{path}' is not a trace: it has no traceEvents list"),
    (b"{\"events\": []}", "'{path}' is not a trace: it has no traceEvents list"),
    (b"{\"traceEvents\": [], \"otherData\": {\"models\": \"m\"}}",
     "'{path}': otherData.models must be a list of model names, got 'm'"),
    ((b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"driver\", \"name\": \"feed\", \"pid\": 1, \"dur\": 5}], "
      b"\"otherData\": {\"models\": [\"m\"]}}"), "trace '{path}' has no node slices of model 'm'"),
    (b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"node\", \"name\": \"node b\", \"pid\": 2, \"dur\": 5}]}",
     ("trace '{path}': traceEvents[0] is not a node slice: it needs a name \"node '<name>' instance <k>\", "
      "an integer pid and a dur >= 0, got {{'ph': 'X', 'cat': 'node', 'name': 'node b', 'pid': 2, 'dur': 5}}")),
    ((b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"node\", \"name\": \"node 'b' instance 0\", \"pid\": 2, "
      b"\"dur\": 5, \"args\": {\"bytes_in\": -4}}]}"),
     "trace '{path}': traceEvents[0].args.bytes_in must be a byte count (an integer >= 0), got -4"),
    ((b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"node\", \"name\": \"node 'b' instance 0\", \"pid\": 2, "
      b"\"dur\": 5, \"args\": {\"bytes_in\": 8, \"bytes_out\": true}}]}"),
     "trace '{path}': traceEvents[0].args.bytes_out must be a byte count (an integer >= 0), got True"),
])
def test_a_file_that_is_not_a_usable_trace_is_an_error(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(GeError) as caught:
        read_trace_times(str(path))
    assert caught.value.error_message == message.format(path=path)


# -- the drawing ---------------------------------------------------------------------------------

def test_scale_colours_run_from_pale_yellow_to_dark_red():
    assert [scale_colour(share, 1.0) for share in (0.0, 0.5, 1.0, 1.5)] == ["#ffffcc", "#fd8d3c", "#800026", "#800026"]
    assert scale_colour(0.05, 0.5) == "#fff1a9"  # a tenth of the way: between the first two colours
    assert scale_colour(0.0, 0.0) == "#ffffcc"   # a trace whose slices all took no time


def test_the_page_holds_each_nodes_times(tmp_path, capsys):
    trace, page = write_trace(tmp_path / "run.json", {"balanced": PLACED_RUN}), tmp_path / "g.html"
    assert cli(["view", str(PLACED), "-o", str(page), "--trace", str(trace)]) == 0
    assert capsys.readouterr().out == f"wrote {page}: 3 graphs\n"
    data = scene_data(page)
    assert data["trace"] == {"file": "run.json", "model": "balanced", "slices": 5, "total_ms": 2.0,
                             "top_share": 0.5, "not_drawn": []}
    boxes = data["diagrams"]["d0"]["boxes"]
    assert boxes["d0_n1"]["trace"] == {"share": 0.05, "calls": 1, "total_ms": 0.1, "p50_ms": 0.1,
                                       "p99_ms": 0.1, "max_ms": 0.1, "instances": 1}
    assert boxes["d0_n3"]["trace"] == {"share": 0.45, "calls": 3, "total_ms": 0.9, "p50_ms": 0.3, "p99_ms": 0.5,
                                       "max_ms": 0.5, "instances": 2,
                                       "instance": {"index": 1, "calls": 1, "total_ms": 0.1, "p50_ms": 0.1,
                                                    "p99_ms": 0.1, "max_ms": 0.1}}
    assert boxes["d0_n2"]["trace"]["instance"]["total_ms"] == 0.8
    assert boxes["d0_n5"]["trace"] is None  # gather_fnode: no slices
    assert "trace" not in boxes["d0_n0"] and "trace" not in boxes["d0_n4"]  # a graph input, a df.gather
    assert data["diagrams"]["d1"]["boxes"]["d1_n1"]["trace"] is None  # inc_fnode in the sub-FlowGraph
    assert '<p class="trace">colours: time in node from trace run.json (model &#x27;balanced&#x27;), 5 node ' \
           'slices, 2.000 ms in all; click a node for its times</p>' in page.read_text()


def test_the_svg_colours_each_node_by_its_share(tmp_path):
    trace, picture = write_trace(tmp_path / "run.json", {"balanced": PLACED_RUN}), tmp_path / "g.svg"
    assert view(str(PLACED), str(picture), "svg", trace=str(trace)) == 1
    svg = ET.parse(picture).getroot()
    nodes = {g.get("id"): g for g in svg.iter(f"{SVG}g") if "node" in (g.get("class") or "").split()}

    def drawn(box_id: str) -> tuple[str, list[str], str]:
        shape = next(e for e in nodes[box_id].iter() if e.tag in (f"{SVG}polygon", f"{SVG}ellipse"))
        link = next(nodes[box_id].iter(f"{SVG}a"))
        return shape.get("fill"), [t.text for t in nodes[box_id].iter(f"{SVG}text")], link.get(XLINK_TITLE)

    assert drawn("d0_n6") == ("#800026", ["post", "50.0% of node time"],
                              ("post: 50.0% of all node time\ncalls 1, total 1.000 ms, p50 1.000 ms, p99 1.000 ms, "
                               "max 1.000 ms\ninstances 1"))
    assert drawn("d0_n1") == ("#fff1a9", ["scatter_fnode", "balance scatter", "5.0% of node time"],
                              ("scatter_fnode: 5.0% of all node time\ncalls 1, total 0.100 ms, p50 0.100 ms, "
                               "p99 0.100 ms, max 0.100 ms\ninstances 1"))
    fill, texts, tooltip = drawn("d0_n2")
    assert (fill, texts) == ("#b10026", ["mlp_node #0/2", "45.0% of node time"])
    assert tooltip.splitlines()[-1] == "instance 0: calls 2, total 0.800 ms, p50 0.300 ms, p99 0.500 ms, max 0.500 ms"
    assert drawn("d0_n5") == ("#fff8e1", ["gather_fnode", "balance gather"], "no slices in the trace")
    assert [t.get("fill") for t in nodes["d0_n6"].iter(f"{SVG}text")] == ["white", "white"]
    legend = [t.text for t in svg.find(f"{SVG}g").findall(f"{SVG}text")]
    assert legend == ["time in node, % of all node time", "0.0%", "10.0%", "20.0%", "30.0%", "40.0%", "50.0%"]


def test_a_bundle_page_colours_the_member_the_trace_is_of(tmp_path):
    script = tmp_path / "adder.py"
    script.write_text(ADDER)
    single, bundle, page = tmp_path / "adder.om", tmp_path / "bundle.om", tmp_path / "bundle.html"
    assert cli(["compile", str(script), "-o", str(single)]) == 0
    bundle.write_bytes(write_bundle([single.read_bytes()] * 2, ["first", "second"]))
    trace = write_trace(tmp_path / "run.json", {"first": [("add_fnode", 0, -1, [100.0])],
                                                "second": [("add_fnode", 0, -1, [200.0, 600.0])]})
    assert view(str(bundle), str(page), trace=str(trace), trace_model="second") == 2
    diagrams = scene_data(page)["diagrams"]
    first, second = (next(b for b in diagrams[d]["boxes"].values() if b["kind"] == "node") for d in ("m0d0", "m1d0"))
    assert "trace" not in first
    assert second["trace"] == {"share": 1.0, "calls": 2, "total_ms": 0.8, "p50_ms": 0.2, "p99_ms": 0.6,
                               "max_ms": 0.6, "instances": 1}


# -- errors --------------------------------------------------------------------------------------

def test_a_trace_of_other_nodes_is_an_error_naming_some_of_each(tmp_path, capsys):
    trace = write_trace(tmp_path / "other.json", {"m": [(name, 0, 0, [10.0]) for name in
                                                        ("alpha", "beta", "gamma", "delta", "eps")]})
    page = tmp_path / "g.html"
    assert cli(["view", str(PLACED), "-o", str(page), "--trace", str(trace)]) == 1
    assert capsys.readouterr().err == (
        f"error: none of the nodes in trace '{trace}' is in the graph: the trace has 'alpha', 'beta', 'delta', "
        f"'eps' and 1 more; the graph has 'scatter_fnode', 'mlp_node', 'gather_fnode', 'post' and 1 more\n")
    assert not page.exists()


def test_trace_options_the_command_cannot_use_are_errors(tmp_path, capsys):
    page = tmp_path / "g.html"
    assert cli(["view", str(PLACED), "-o", str(page), "--trace-model", "m"]) == 1
    assert capsys.readouterr().err == \
        "error: dfir view: --trace-model picks a model of a trace; give the trace with --trace FILE\n"
    missing = tmp_path / "none.json"
    assert cli(["view", str(PLACED), "-o", str(page), "--trace", str(missing)]) == 1
    assert capsys.readouterr().err == f"error: trace '{missing}' does not exist\n"
    two = write_trace(tmp_path / "two.json", {"a": PLACED_RUN, "b": PLACED_RUN})
    assert cli(["view", str(PLACED), "-o", str(page), "--trace", str(two)]) == 1
    assert capsys.readouterr().err == \
        f"error: trace '{two}' holds 2 models ('a', 'b'); choose one with --trace-model NAME\n"
    assert not page.exists()
    assert cli(["view", str(PLACED), "-o", str(page), "--trace", str(two), "--trace-model", "b"]) == 0
    assert scene_data(page)["trace"]["model"] == "b"


# -- the page in a browser -----------------------------------------------------------------------

@pytest.mark.skipif((shutil.which("chromedriver") is None or shutil.which("chromium") is None)
                    and not os.environ.get("CI"),
                    reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")
def test_the_page_shows_the_legend_and_a_replicas_times(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    trace, page = write_trace(tmp_path / "run.json", {"balanced": PLACED_RUN}), tmp_path / "g.html"
    assert view(str(PLACED), str(page), trace=str(trace)) == 3
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        browser.get(page.as_uri())
        legend = [t for t in browser.find_elements(By.CSS_SELECTOR, "#d0 svg text")
                  if t.text == "time in node, % of all node time"]
        assert len(legend) == 1 and legend[0].is_displayed()
        replica = browser.find_element(By.ID, "d0_n3")
        assert "p99 0.500 ms" in replica.find_element(By.TAG_NAME, "a").get_attribute("xlink:title")
        replica.click()
        times = browser.find_element(By.CSS_SELECTOR, "#details div.trace")
        headings = [h.text for h in times.find_elements(By.TAG_NAME, "h4")]
        rows = [(dt.text, dd.text) for dt, dd in zip(times.find_elements(By.TAG_NAME, "dt"),
                                                      times.find_elements(By.TAG_NAME, "dd"))]
        assert headings == ["time in node", "this instance (1)"]
        assert rows == [("share", "45.0% of all node time"), ("calls", "3"), ("total", "0.900 ms"),
                        ("p50", "0.300 ms"), ("p99", "0.500 ms"), ("max", "0.500 ms"), ("instances", "2"),
                        ("calls", "1"), ("total", "0.100 ms"), ("p50", "0.100 ms"), ("p99", "0.100 ms"),
                        ("max", "0.100 ms")]
        browser.find_element(By.ID, "d0_n5").click()
        assert browser.find_element(By.CSS_SELECTOR, "#details p.hint.trace").text == "no slices in the trace"
        assert [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")] == []
    finally:
        browser.quit()
