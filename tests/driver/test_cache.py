"""The compile cache: options, files, whole and per-subgraph reuse, corruption, variables,
resource configs, offline deploy in another process, concurrent writers, `dfir cache`."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.driver import job
from dfir.driver.cache.checked_om import read_checked_om
from dfir.driver.cache.index import IndexEntry, read_index
from dfir.driver.cache.settings import cache_settings
from dfir.driver.cache.store import CacheStore
from dfir.driver.cache.units import CachedGraph, read_unit
from dfir.driver.cache.variables import read_rdcpkt
from dfir.driver.job import print_module
from dfir.frontend import importer
from dfir.frontend.dataflow import names, session
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.lowering import plan
from dfir.lowering.om_writer import write_bundle, write_om
from dfir.om.schema import HEADER_OFFSETS, HEADER_SIZE, SIGNATURE_TRAILER_SIZE, PartitionType
from dfir.om.trust import signing_key
from dfir.passes.fingerprint_subgraphs import Structure
from dfir.runtime.om import read_om
from dfir.tools.cli import main as cli

KEY = "pipe"
MODEL_NAME = re.compile(rf"{KEY}_\d{{20}}\.om")


def make_udf(offset: int):
    def shift(x):
        return x + offset
    return df.pyflow(shift)


def scale_graph(scale: float, variable_dtype=np.float32, variable_shape=(2,)) -> Graph:
    graph = Graph("scale")
    x = graph.data(0, shape=[-1, 2], dtype=dt.DT_FLOAT, name="x")
    y = graph.mul(x, graph.const(np.full([2], scale, np.float32)))
    if variable_dtype is not None:
        bias = graph.variable(np.zeros(variable_shape, variable_dtype), name="bias")
        y = graph.add(y, bias) if variable_dtype == np.float32 else y
    graph.set_outputs([y])
    return graph


def build(offset: int = 1, scale: float = 2.0, alias: str | None = None,
          load_params: dict | None = None, **graph_kwargs) -> df.FlowGraph:
    """x -> shift(+offset) -> scale(*scale) -> out, as a fresh frontend graph; `alias` names the
    scale node in deploy files (a change of the df.graph alone), `load_params` are given to its
    process point (a change the IR does not see)."""
    names.reset()
    x = df.FlowData(name="x")
    shifted = make_udf(offset).fnode()(x)
    graph = scale_graph(scale, **graph_kwargs) if graph_kwargs else scale_graph(scale, variable_dtype=None)
    point = df.GraphProcessPoint(df.Framework.ONNX, graph, load_params=load_params, name="scaler")
    node = point.fnode(1, 1, name="scale")
    if alias is not None:
        node.set_alias(alias)
    return df.FlowGraph([node(shifted)], name="pipe")


@pytest.fixture
def cache_dir(tmp_path):
    directory = tmp_path / "cache"
    directory.mkdir()
    return directory


def options(cache_dir, **extra) -> dict[str, str]:
    return {"ge.graph_compiler_cache_dir": str(cache_dir), "ge.graph_key": KEY, **extra}


def cache_lines(compiled) -> list[str]:
    return [line for line in compiled.report if line.startswith("cache:")]


def run(om: bytes, value: float) -> list[float]:
    with dfir.load(om) as model:
        model.feed_data({"x": np.full([1, 2], value, np.float32)})
        outputs, _, ret = model.fetch_data(timeout=5000)
    assert ret == 0
    return outputs[0].numpy().ravel().tolist()


# --- options -----------------------------------------------------------------------------------

def test_the_cache_is_off_unless_both_directory_and_key_are_set(cache_dir):
    dfir.compile(build(), {"ge.graph_compiler_cache_dir": str(cache_dir)})
    dfir.compile(build(), {"ge.graph_key": KEY})
    dfir.compile(build(), {"ge.graph_compiler_cache_dir": "", "ge.graph_key": KEY})
    assert os.listdir(cache_dir) == []


@pytest.mark.parametrize("key", ["bad key", "x" * 129, "a/b", ""])
def test_a_malformed_graph_key_is_an_error_quoting_it(cache_dir, key):
    with pytest.raises(GeError) as error:
        dfir.compile(build(), options(cache_dir) | {"ge.graph_key": key})
    assert str(error.value) == (f"dfir.compile failed; option=ge.graph_key; option ge.graph_key has "
                                f"malformed value {key!r}: expected 1 to 128 of A-Z a-z 0-9 _ -")


def test_the_cache_directory_must_exist(tmp_path):
    missing = str(tmp_path / "missing")
    with pytest.raises(GeError) as error:
        dfir.compile(build(), {"ge.graph_compiler_cache_dir": missing, "ge.graph_key": KEY})
    assert str(error.value) == (
        f"dfir.compile failed; option=ge.graph_compiler_cache_dir; option ge.graph_compiler_cache_dir "
        f"has malformed value {missing!r}: expected an existing directory (the compile cache does not "
        f"create it)")


# --- files ---------------------------------------------------------------------------------------

def test_a_cold_compile_writes_the_index_the_model_and_a_unit_per_process_point(cache_dir):
    compiled = dfir.compile(build(), options(cache_dir))
    (entry,) = read_index(str(cache_dir), KEY)
    assert MODEL_NAME.fullmatch(entry.cache_file_name)
    assert entry.var_desc_file_name == "" and entry.offline is False
    assert sorted(os.listdir(cache_dir)) == sorted([f"{KEY}.idx", f"{KEY}.lock", entry.cache_file_name, KEY])
    manifest = _manifest(compiled)
    document = json.loads((cache_dir / f"{KEY}.idx").read_text())
    assert document == {"cache_file_list": [{
        "graph_key": KEY, "cache_file_name": entry.cache_file_name, "var_desc_file_name": "",
        "fingerprint": entry.fingerprint, "offline": False, "frontend_key": entry.frontend_key,
        "points": {next(iter(entry.points)): manifest["subgraphs"]["scaler_pp"]}}]}
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", entry.frontend_key)
    assert (cache_dir / entry.cache_file_name).read_bytes() == compiled.om
    assert manifest["graph_key"] == KEY and manifest["fingerprint"] == entry.fingerprint
    assert sorted(manifest["subgraphs"]) == ["scaler_pp", "shift_pp"] and manifest["variables"] == []
    units = sorted(os.listdir(cache_dir / KEY))
    assert units == sorted(key.removeprefix("sha256:") + ".om"
                           for key in [*manifest["subgraphs"].values(), manifest["graph_unit"]])
    assert cache_lines(compiled)[0] == f"cache: graph key {KEY}: miss; stored {entry.cache_file_name}; " \
                                       "0 of 2 process points reused"
    assert run(compiled.om, 1.0) == [4.0, 4.0]


def test_a_warm_compile_loads_the_cached_model_without_importing(cache_dir, monkeypatch):
    cold = dfir.compile(build(), options(cache_dir))

    def forbidden(*args, **kwargs):
        raise AssertionError("a warm compile must not import, run a pass or lower")
    for name in ("import_flow_graph", "run_phases", "lower_graph"):  # as the compile steps see them
        module = job
        monkeypatch.setattr(module, name, forbidden)
    warm = dfir.compile(build(), options(cache_dir))
    (entry,) = read_index(str(cache_dir), KEY)
    assert warm.om == cold.om and warm.ir == cold.ir
    assert [line.split(":")[0] for line in warm.report] == ["cache", "cache", "cache"]
    assert cache_lines(warm) == [
        f"cache: graph key {KEY}: hit {entry.cache_file_name}; 2 of 2 process points reused",
        f"cache: @shift_pp hit {_short(warm, 'shift_pp')}",
        f"cache: @scaler_pp hit {_short(warm, 'scaler_pp')}"]
    assert "lower" not in warm.timings
    assert [op.sym_name.data for op in warm.module.ops] == [op.sym_name.data for op in cold.module.ops]
    assert run(warm.om, 1.0) == [4.0, 4.0]


def _manifest(compiled) -> dict:
    return json.loads(bytes(read_om(compiled.om).models[0].partition(PartitionType.CACHE_MANIFEST).data))


def _short(compiled, symbol: str) -> str:
    return _manifest(compiled)["subgraphs"][symbol][:len("sha256:") + 16]


@pytest.mark.parametrize("change, missed", [({"offset": 5}, "shift_pp"), ({"scale": 3.0}, "scaler_pp")])
def test_a_change_recompiles_only_the_changed_process_point(tmp_path, cache_dir, change, missed):
    dfir.compile(build(), options(cache_dir))
    changed = dfir.compile(build(**change), options(cache_dir))
    statuses = dict(line.split()[1:3] for line in cache_lines(changed)[1:])
    assert statuses == {"@shift_pp": "miss" if missed == "shift_pp" else "hit",
                        "@scaler_pp": "miss" if missed == "scaler_pp" else "hit"}
    assert "1 of 2 process points reused" in cache_lines(changed)[0]
    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    assert changed.om == dfir.compile(build(**change), options(fresh_dir)).om
    assert len(read_index(str(cache_dir), KEY)) == 2
    offset, scale = change.get("offset", 1), change.get("scale", 2.0)
    assert run(changed.om, 1.0) == [(1.0 + offset) * scale] * 2


def forbid(monkeypatch, module, name: str) -> None:
    def forbidden(*args, **kwargs):
        raise AssertionError(f"{name} must not run")
    monkeypatch.setattr(module, name, forbidden)


def test_a_cache_compile_walks_the_graph_once(cache_dir, monkeypatch):
    forbid(monkeypatch, importer, "walk_flow_graph")  # the importer takes the cache keys' walk
    compiled = dfir.compile(build(), options(cache_dir))
    assert run(compiled.om, 1.0) == [4.0, 4.0]


def graph_builds(monkeypatch) -> list[str]:
    """The names of the GE graphs built into IR from now on (filled as they are built)."""
    built = []
    to_ir = Graph.to_ir

    def counted(self, verify=True):
        built.append(self.name)
        return to_ir(self, verify)
    monkeypatch.setattr(Graph, "to_ir", counted)
    return built


@pytest.mark.parametrize("change, built", [({"offset": 5}, []), ({"scale": 3.0}, ["scale"])])
def test_one_change_builds_only_the_changed_graph_and_reuses_the_df_graph(tmp_path, cache_dir, monkeypatch,
                                                                           change, built):
    dfir.compile(build(), options(cache_dir))
    builds = graph_builds(monkeypatch)
    forbid(monkeypatch, importer, "_flow_graph_op")  # the df.graph is not built,
    forbid(monkeypatch, plan, "graph_skeleton")      # nor lowered
    changed = dfir.compile(build(**change), options(cache_dir))
    assert builds == built
    assert f"{'miss' if change.get('offset') else 'hit'} " in cache_lines(changed)[1]  # @shift_pp
    monkeypatch.undo()
    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    assert changed.om == dfir.compile(build(**change), options(fresh_dir)).om


def test_a_reused_df_graph_keeps_its_placement_from_the_deploy_info(tmp_path, cache_dir):
    deploy = tmp_path / "deploy.json"
    deploy.write_text(json.dumps({"deploy_info": [{"flow_node_name": "scale", "logic_device_id": "0:0:1"},
                                                     {"flow_node_name": "shift_fnode", "logic_device_id": "-1"}]}))
    deployed = options(cache_dir, **{"ge.experiment.data_flow_deploy_info_path": str(deploy)})
    dfir.compile(build(), deployed)
    changed = dfir.compile(build(offset=3), deployed)
    assert not [line for line in changed.report if line.startswith("place-nodes")], "the df.graph is reused"
    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    fresh = dfir.compile(build(offset=3), deployed | {"ge.graph_compiler_cache_dir": str(fresh_dir)})
    assert changed.om == fresh.om
    devices = [unit["device"] for unit in json.loads(bytes(read_om(changed.om).models[0].partition(
        PartitionType.FLOW_MODEL).data))["units"]]
    assert devices == ["-1", "0:0:1"]


def test_a_change_of_the_df_graph_alone_reuses_every_process_point(tmp_path, cache_dir, monkeypatch):
    dfir.compile(build(), options(cache_dir))
    builds = graph_builds(monkeypatch)
    changed = dfir.compile(build(alias="scaler_node"), options(cache_dir))
    assert builds == [] and "miss" in cache_lines(changed)[0]
    assert "2 of 2 process points reused" in cache_lines(changed)[0]
    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    assert changed.om == dfir.compile(build(alias="scaler_node"), options(fresh_dir)).om


def test_a_frontend_change_the_ir_does_not_see_finds_the_model_and_gives_it_its_key(cache_dir, monkeypatch):
    cold = dfir.compile(build(), options(cache_dir))
    (before,) = read_index(str(cache_dir), KEY)
    again = dfir.compile(build(load_params={"mode": "fast"}), options(cache_dir))
    (after,) = read_index(str(cache_dir), KEY)
    assert again.om == cold.om and again.report[0].startswith("fingerprint-subgraphs: ")
    assert cache_lines(again)[0] == \
        f"cache: graph key {KEY}: hit {before.cache_file_name}; 2 of 2 process points reused"
    assert after == IndexEntry(KEY, before.cache_file_name, "", before.fingerprint, False, after.frontend_key,
                               after.points)
    assert after.frontend_key != before.frontend_key and after.points != before.points
    forbid(monkeypatch, job, "import_flow_graph")
    assert dfir.compile(build(load_params={"mode": "fast"}), options(cache_dir)).om == cold.om


def test_the_plan_of_a_cache_compile_equals_the_plan_without_cache(cache_dir):
    dfir.compile(build(), options(cache_dir))
    incremental = dfir.compile(build(offset=7), options(cache_dir))
    plain = dfir.compile(build(offset=7))
    partition = PartitionType.FLOW_MODEL
    assert read_om(incremental.om).models[0].partition(partition).data == \
        read_om(plain.om).models[0].partition(partition).data
    assert incremental.ir == plain.ir == print_module(plain.module)


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_a_damaged_cached_model_is_rebuilt_never_loaded(cache_dir, damage, caplog):
    cold = dfir.compile(build(), options(cache_dir))
    (entry,) = read_index(str(cache_dir), KEY)
    path = cache_dir / entry.cache_file_name
    data = bytearray(path.read_bytes())
    path.write_bytes(bytes(data[:len(data) // 2]) if damage == "truncate" else
                     bytes(data[:1000]) + bytes([data[1000] ^ 1]) + bytes(data[1001:]))
    with caplog.at_level(logging.WARNING, logger="dfir.cache"):
        again = dfir.compile(build(), options(cache_dir))
    assert f"cached model {path} is not usable" in caplog.text
    assert again.om == cold.om
    assert "miss" in cache_lines(again)[0] and "2 of 2 process points reused" in cache_lines(again)[0]
    (new_entry,) = read_index(str(cache_dir), KEY)
    assert new_entry.cache_file_name != entry.cache_file_name and not path.exists()


def test_a_damaged_graph_unit_is_rebuilt(tmp_path, cache_dir, caplog):
    cold = dfir.compile(build(), options(cache_dir))
    unit = cache_dir / KEY / (_manifest(cold)["graph_unit"].removeprefix("sha256:") + ".om")
    data = bytearray(unit.read_bytes())
    data[-1 - SIGNATURE_TRAILER_SIZE] ^= 1  # the last byte before the signature
    unit.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="dfir.cache"):
        changed = dfir.compile(build(offset=6), options(cache_dir))
    assert f"subgraph cache {unit} is not usable (the content does not match its checksum" in caplog.text
    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    assert changed.om == dfir.compile(build(offset=6), options(fresh_dir)).om
    assert read_unit(unit.read_bytes(), _manifest(cold)["graph_unit"]).printed_fingerprint == \
        _manifest(changed)["fingerprint"]


def test_a_unit_of_the_wrong_kind_is_not_used(tmp_path, cache_dir, caplog):
    cold = dfir.compile(build(), options(cache_dir))
    shift_fingerprint = _manifest(cold)["subgraphs"]["shift_pp"]
    store = CacheStore(cache_settings(options(cache_dir)), signing_key())  # signed as a compile signs
    skeleton = plan.read_skeleton({"format": 1, "name": "pipe", "inputs": [], "outputs": [], "nodes": []})
    graph = CachedGraph(skeleton, "pipe", "text sha256:1", "sha256:1", Structure("0", ()))
    store.store_unit(shift_fingerprint, graph)
    with caplog.at_level(logging.WARNING, logger="dfir.cache"):
        changed = dfir.compile(build(scale=4.0), options(cache_dir))
    assert (f"subgraph cache {store.unit_path(shift_fingerprint)} is not usable (it holds a CachedGraph, "
            "expected a CachedUnit)") in caplog.text
    assert "0 of 2 process points reused" in cache_lines(changed)[0]
    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    assert changed.om == dfir.compile(build(scale=4.0), options(fresh_dir)).om


def unit_file(manifest: dict, texts: tuple[bytes, ...] = (b"text",)) -> bytes:
    document = {"format": 3, "fingerprint": "sha256:1", **manifest}
    partitions = [(PartitionType.CACHE_MANIFEST, json.dumps(document).encode())]
    return write_om([partitions + [(PartitionType.IR_TEXT, text) for text in texts]], name="subgraph")


GRAPH_MANIFEST = {"kind": "graph", "skeleton": {}, "symbol": "g", "printed_fingerprint": "sha256:9",
                  "structure": "0", "references": []}


@pytest.mark.parametrize("data, message", [
    (b"short", "not an .om file (no .om header)"),
    (write_om([[(PartitionType.CACHE_MANIFEST, b"{")]], name="subgraph"), "the subgraph manifest is not JSON: "
     "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    (unit_file({"format": 1}), "not a subgraph cache file of format 3"),
    (unit_file({"fingerprint": "sha256:2"}), "the file holds fingerprint sha256:2, expected sha256:1"),
    (unit_file({"kind": "recipe"}), "the subgraph manifest has unknown kind 'recipe'"),
    (unit_file({"kind": "process point", "plan": {}, "ops": ["a"]}),
     "the manifest of this process point unit is malformed"),
    (unit_file({"kind": "process point", "plan": [], "ops": ["a"], "variables": []}),
     "the manifest of this process point unit is malformed"),
    (unit_file({"kind": "process point", "plan": {}, "ops": ["a", "b"], "variables": []}),
     "the file lists 2 ops but holds 1 texts"),
    (unit_file({**GRAPH_MANIFEST, "symbol": None}, (b"text sha256:9",)),
     "the manifest of this graph unit is malformed"),
    (unit_file(GRAPH_MANIFEST, (b"text",)), "the graph's text does not hold its printed fingerprint exactly once"),
    (unit_file(GRAPH_MANIFEST, (b"a sha256:9", b"b sha256:9")), "a graph unit holds one text, this one 2"),
    (unit_file({**GRAPH_MANIFEST, "skeleton": []}, (b"text sha256:9",)),
     "the manifest of this graph unit is malformed")])
def test_a_malformed_unit_file_is_refused_saying_why(data, message):
    with pytest.raises(GeError) as error:
        read_unit(data, "sha256:1")
    assert str(error.value) == message


def test_a_damaged_subgraph_unit_is_rebuilt(cache_dir, caplog):
    dfir.compile(build(), options(cache_dir))
    unit = next(iter((cache_dir / KEY).iterdir()))
    unit.write_bytes(unit.read_bytes()[:-10])
    with caplog.at_level(logging.WARNING, logger="dfir.cache"):
        changed = dfir.compile(build(offset=2, scale=5.0), options(cache_dir))
    assert "0 of 2 process points reused" in cache_lines(changed)[0]
    again = dfir.compile(build(offset=3, scale=5.0), options(cache_dir))
    assert "1 of 2 process points reused" in cache_lines(again)[0]
    assert run(again.om, 1.0) == [20.0, 20.0]


def _index_with(cache_dir, entry: dict) -> None:
    """An index whose first entry is `entry`, followed by the good entries a compile wrote."""
    path = cache_dir / f"{KEY}.idx"
    good = json.loads(path.read_text())["cache_file_list"] if path.exists() else []
    path.write_text(json.dumps({"cache_file_list": [entry, *good]}))


@pytest.mark.parametrize("name", ["../outside.om", "/etc/passwd", ".", "link.om"])
def test_an_index_entry_pointing_outside_the_directory_is_dropped_and_the_index_rebuilt(cache_dir, name, caplog):
    cold = dfir.compile(build(), options(cache_dir))
    (cache_dir / "link.om").symlink_to(cache_dir.parent / "elsewhere.om")
    _index_with(cache_dir, {"graph_key": KEY, "cache_file_name": name, "var_desc_file_name": "",
                            "fingerprint": "sha256:0"})
    with caplog.at_level(logging.WARNING, logger="dfir.cache"):
        warm = dfir.compile(build(), options(cache_dir))
    assert caplog.messages == [f"cache index entry dropped: file={cache_dir / f'{KEY}.idx'}; "
                               f"cache_file_list[0].cache_file_name {name!r} points outside the cache "
                               f"directory {cache_dir}"]
    assert warm.om == cold.om and cache_lines(warm)[0].startswith(f"cache: graph key {KEY}: hit")
    assert len(read_index(str(cache_dir), KEY)) == 1


@pytest.mark.parametrize("field, value, expected", [
    ("frontend_key", 3, "cache_file_list[0].frontend_key must be a string, got 3"),
    ("points", [], "cache_file_list[0].points must be an object of strings, got []"),
    ("points", {"sha256:1": 2},
     "cache_file_list[0].points must be an object of strings, got {'sha256:1': 2}")])
def test_an_index_entry_with_a_malformed_dfir_field_is_dropped(cache_dir, field, value, expected, caplog):
    _index_with(cache_dir, {"graph_key": KEY, "cache_file_name": f"{KEY}_20260101000000000000.om",
                            "var_desc_file_name": "", "fingerprint": "sha256:0", field: value})
    with caplog.at_level(logging.WARNING, logger="dfir.cache"):
        compiled = dfir.compile(build(), options(cache_dir))
    assert caplog.messages == [f"cache index entry dropped: file={cache_dir / f'{KEY}.idx'}; {expected}"]
    assert run(compiled.om, 1.0) == [4.0, 4.0]
    assert [entry.cache_file_name for entry in read_index(str(cache_dir), KEY)] == \
        [cache_lines(compiled)[0].split("stored ")[1].split(";")[0]]


def test_an_unreadable_index_is_dropped_and_rewritten(cache_dir, caplog):
    dfir.compile(build(), options(cache_dir))
    (cache_dir / f"{KEY}.idx").write_text('{"cache_file_list": [')
    with caplog.at_level(logging.WARNING, logger="dfir.cache"):
        compiled = dfir.compile(build(), options(cache_dir))
    assert "cache index is unreadable" in caplog.text
    assert "2 of 2 process points reused" in cache_lines(compiled)[0]
    assert len(read_index(str(cache_dir), KEY)) == 1


# --- checked reads -----------------------------------------------------------------------------

def resealed(data: bytearray) -> bytes:
    """`data` with both header digests computed anew (as a forger would)."""
    at = HEADER_OFFSETS["checksum"]
    data[at:at + 32] = hashlib.sha256(data[HEADER_SIZE:]).digest()
    data[at + 32:at + 64] = bytes(32)
    data[at + 32:at + 64] = hashlib.sha256(data[:HEADER_SIZE]).digest()
    return bytes(data)


def flow_om() -> bytearray:
    texts = [(PartitionType.IR_TEXT, b"text"), (PartitionType.IR_TEXT, b"more")]
    return bytearray(write_om([texts], name="t"))


def test_a_checked_read_gives_the_partitions():
    om = read_checked_om(bytes(flow_om()))
    assert [bytes(p) for p in om.partitions_of(PartitionType.IR_TEXT)] == [b"text", b"more"]
    assert len(om.partitions_of(PartitionType.WEIGHTS_DATA)) == 0
    with pytest.raises(GeError) as error:
        om.partition(PartitionType.IR_TEXT)
    assert str(error.value) == "the file has 2 IR_TEXT partitions, expected 1"


def _damaged(kind: str) -> bytes:
    data = flow_om()
    table = HEADER_SIZE + 8
    if kind == "not om":
        return b"plain text" * 40
    if kind == "header":
        data[HEADER_OFFSETS["name"]] ^= 1
    elif kind == "content":
        data[-1] ^= 1
    elif kind == "truncated":
        return bytes(data[:-1])
    elif kind == "bundle":
        return write_bundle([bytes(data), bytes(data)], ["a", "b"])
    elif kind == "table":
        data[HEADER_SIZE:HEADER_SIZE + 4] = (10 ** 6).to_bytes(4, "little")
    elif kind == "bounds":
        data[table + 16:table + 24] = (10 ** 6).to_bytes(8, "little")
    elif kind == "type":
        data[table:table + 4] = (0x0FFF).to_bytes(4, "little")
    return resealed(data) if kind in ("table", "bounds", "type") else bytes(data)


@pytest.mark.parametrize("kind, message", [
    ("not om", "not an .om file (no .om header)"),
    ("header", "the header does not match its checksum"),
    ("content", "the content does not match its checksum (the file is damaged or truncated)"),
    ("truncated", "the content does not match its checksum (the file is damaged or truncated)"),
    ("bundle", "expected one flow model of {size} bytes, the header says model type 5, 2 models of "
               "{size} bytes"),
    ("table", "the partition table of 1000000 entries does not fit in the file"),
    # the first partition starts on the first 64-byte boundary after the table, at 384
    ("bounds", "partition 0 [384, 1000384) lies outside the file"),
    ("type", "partition 0 has unknown type 4095")])
def test_a_checked_read_refuses_a_damaged_or_foreign_file(kind, message):
    data = _damaged(kind)
    with pytest.raises(GeError) as error:
        read_checked_om(data)
    assert str(error.value) == message.format(size=len(data) - HEADER_SIZE)


# --- variables ----------------------------------------------------------------------------------

def test_a_graph_with_variables_writes_its_variable_formats(cache_dir):
    dfir.compile(build(variable_dtype=np.float32), options(cache_dir))
    (entry,) = read_index(str(cache_dir), KEY)
    assert entry.var_desc_file_name == entry.cache_file_name[:-3] + ".rdcpkt"
    document = json.loads((cache_dir / entry.var_desc_file_name).read_text())
    assert document == {"format": 1, "variables": [
        {"graph": "scale", "name": "bias", "dtype": "DT_FLOAT", "format": "ND", "shape": [2]}]}


def test_a_reused_graph_keeps_its_variables_in_the_new_model(tmp_path, cache_dir, monkeypatch):
    dfir.compile(build(variable_dtype=np.float32), options(cache_dir))
    builds = graph_builds(monkeypatch)
    changed = dfir.compile(build(offset=6, variable_dtype=np.float32), options(cache_dir))
    assert builds == []
    _, entry = read_index(str(cache_dir), KEY)
    assert read_rdcpkt((cache_dir / entry.var_desc_file_name).read_bytes()) == [
        {"graph": "scale", "name": "bias", "dtype": "DT_FLOAT", "format": "ND", "shape": [2]}]
    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    assert changed.om == dfir.compile(build(offset=6, variable_dtype=np.float32), options(fresh_dir)).om


@pytest.mark.parametrize("change", [{"variable_dtype": np.int32}, {"variable_shape": (1,)}])
def test_a_change_in_a_variable_makes_a_new_entry(cache_dir, change):
    dfir.compile(build(variable_dtype=np.float32), options(cache_dir))
    changed = dfir.compile(build(**{"variable_dtype": np.float32, **change}), options(cache_dir))
    assert "miss" in cache_lines(changed)[0]
    first, second = read_index(str(cache_dir), KEY)
    variables = json.loads((cache_dir / second.var_desc_file_name).read_text())["variables"]
    assert (variables[0]["dtype"], variables[0]["shape"]) == \
        ("DT_INT32" if "variable_dtype" in change else "DT_FLOAT", [1] if "variable_shape" in change else [2])


def test_a_tampered_variable_format_file_invalidates_its_entry(cache_dir):
    dfir.compile(build(variable_dtype=np.float32), options(cache_dir))
    (entry,) = read_index(str(cache_dir), KEY)
    path = cache_dir / entry.var_desc_file_name
    path.write_text(path.read_text().replace("DT_FLOAT", "DT_FLOAT16"))
    again = dfir.compile(build(variable_dtype=np.float32), options(cache_dir))
    assert "miss" in cache_lines(again)[0]
    (new_entry,) = read_index(str(cache_dir), KEY)
    assert new_entry != entry and not path.exists()


# --- resource configs ------------------------------------------------------------------------------

def resource_config(ipaddr: str = "192.168.0.1", device_id: int = 0) -> dict:
    return {"cluster": [{"cluster_nodes": [{"node_id": 0, "node_type": "ATLAS", "ipaddr": ipaddr,
                                            "port": 2509, "item_list": [{"item_id": 0, "device_id": device_id,
                                                                         "ipaddr": ipaddr}]}]}],
            "node_def": [], "item_def": []}


def write_config(path, config) -> str:
    path.write_text(json.dumps(config))
    return str(path)


def test_the_resource_config_is_stored_in_the_model(tmp_path, monkeypatch):
    monkeypatch.setenv("RESOURCE_CONFIG_PATH", write_config(tmp_path / "numa.json", resource_config()))
    compiled = dfir.compile(build())
    stored = read_om(compiled.om).models[0].partition(PartitionType.RESOURCE_CONFIG).data
    assert json.loads(bytes(stored)) == resource_config()


def test_an_offline_model_loads_where_only_ipaddr_differs(tmp_path, cache_dir, monkeypatch):
    compile_time = write_config(tmp_path / "compile.json", resource_config("10.0.0.1"))
    dfir.compile(build(), options(cache_dir, **{"ge.runFlag": "0", "ge.resourceConfigPath": compile_time}))
    (entry,) = read_index(str(cache_dir), KEY)
    assert entry.offline is True
    monkeypatch.setenv("RESOURCE_CONFIG_PATH", write_config(tmp_path / "target.json", resource_config("10.9.9.9")))
    target = dfir.compile(build(), options(cache_dir))
    assert cache_lines(target)[0].startswith(f"cache: graph key {KEY}: hit {entry.cache_file_name}")


def test_an_offline_model_refuses_another_resource_config(tmp_path, cache_dir, monkeypatch):
    compile_time = write_config(tmp_path / "compile.json", resource_config("10.0.0.1"))
    dfir.compile(build(), options(cache_dir, **{"ge.runFlag": "0", "ge.resourceConfigPath": compile_time}))
    (entry,) = read_index(str(cache_dir), KEY)
    config = resource_config("10.9.9.9", device_id=1)
    config["node_def"] = [{"node_type": "ATLAS"}]
    target = write_config(tmp_path / "target.json", config)
    monkeypatch.setenv("RESOURCE_CONFIG_PATH", target)
    with pytest.raises(GeError) as error:
        dfir.compile(build(), options(cache_dir))
    assert str(error.value) == (
        f"dfir.compile failed; graph_key={KEY}; the cached model {entry.cache_file_name} was compiled "
        f"offline for another resource config; the one here ({target}) must be the same except ipaddr "
        "fields. Differences: $.cluster[0].cluster_nodes[0].item_list[0].device_id: compiled with 0, "
        "here 1; $.node_def: compiled with 0 items, here 1")


def test_a_model_compiled_to_run_is_compiled_again_for_another_resource_config(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("RESOURCE_CONFIG_PATH", write_config(tmp_path / "a.json", resource_config(device_id=0)))
    dfir.compile(build(), options(cache_dir))
    monkeypatch.setenv("RESOURCE_CONFIG_PATH", write_config(tmp_path / "b.json", resource_config(device_id=1)))
    again = dfir.compile(build(), options(cache_dir))
    assert "miss" in cache_lines(again)[0] and len(read_index(str(cache_dir), KEY)) == 2


def test_an_unreadable_resource_config_is_an_error_naming_it(tmp_path):
    path = tmp_path / "numa.json"
    path.write_text("[1, 2]")
    with pytest.raises(GeError) as error:
        dfir.compile(build(), {"ge.resourceConfigPath": str(path)})
    assert str(error.value) == f"file={path}; the resource config must be a JSON object, got list"


# --- FlowGraph, offline deploy in a second process, concurrent writers -------------------------------

def test_a_flow_graph_with_run_flag_0_only_compiles_into_the_cache(cache_dir):
    graph = build()
    graph.graph_options = {"ge.graph_key": KEY, "ge.runFlag": "0"}
    session.init({"ge.graph_compiler_cache_dir": str(cache_dir)})
    try:
        assert graph.feed_data({graph.inputs[0]: np.ones([1, 2], np.float32)}) == 0
        with pytest.raises(GeError, match="has no loaded model"):
            graph.fetch_data(timeout=100)
    finally:
        df.finalize()
    (entry,) = read_index(str(cache_dir), KEY)
    assert entry.offline is True


PIPELINE_SCRIPT = textwrap.dedent("""
    import hashlib, json, sys
    import numpy as np
    import dfir, dfir.driver.job
    import dfir.data_type as dt
    import dfir.dataflow as df
    from dfir.ge.graph import Graph

    cache_dir, run_flag, mode = sys.argv[1:4]

    @df.pyflow
    def shift(x):
        return x + 1

    @df.pyflow
    class Scale:
        def __init__(self, factor):
            self.factor = factor

        @df.method()
        def scale(self, x):
            return x * self.factor

    if mode == "no-compile":
        phases = dfir.driver.job.run_phases

        def only_fingerprint(ctx, module, stop_after, report, **kwargs):
            assert stop_after == "fingerprint", f"phases after fingerprint ran: {stop_after}"
            return phases(ctx, module, stop_after, report, **kwargs)

        def no_lowering(*args, **kwargs):
            raise AssertionError("lowering ran")
        dfir.driver.job.run_phases = only_fingerprint
        dfir.driver.job.lower_graph = no_lowering

    df.init({"ge.graph_compiler_cache_dir": cache_dir, "ge.runFlag": run_flag})
    graph = Graph("double")
    x = graph.data(0, shape=[-1, 2], dtype=dt.DT_FLOAT, name="x")
    graph.set_outputs([graph.mul(x, graph.const(np.full([2], 2.0, np.float32)))])
    data = df.FlowData(name="x")
    out = df.GraphProcessPoint(df.Framework.ONNX, graph).fnode(1, 1, name="double")(
        Scale.fnode(3).scale(shift.fnode()(data)))
    dag = df.FlowGraph([out], {"ge.graph_key": "deploy"})
    assert dag.feed_data({data: np.ones([1, 2], np.float32)}) == 0
    result = None
    if run_flag != "0":
        outputs, _, ret = dag.fetch_data(timeout=10000)
        assert ret == 0, ret
        result = outputs[0].numpy().ravel().tolist()
    compiled = dag.compile()
    print(json.dumps({"report": list(compiled.report), "result": result,
                      "om": hashlib.sha256(compiled.om).hexdigest()}))
    df.finalize()
""")


def run_script(tmp_path, *args: str) -> subprocess.Popen:
    script = tmp_path / "deploy_pipeline.py"
    if not script.exists():
        script.write_text(PIPELINE_SCRIPT)
    return subprocess.Popen([sys.executable, str(script), *args], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def outcome(process: subprocess.Popen) -> dict:
    out, err = process.communicate(timeout=240)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_an_offline_compile_deploys_to_a_copied_directory_that_loads_without_compiling(tmp_path):
    development, target = tmp_path / "dev_cache", tmp_path / "target_cache"
    development.mkdir()
    compiled = outcome(run_script(tmp_path, str(development), "0", "compile"))
    assert compiled["result"] is None and "miss" in compiled["report"][-4]
    shutil.copytree(development, target)
    deployed = outcome(run_script(tmp_path, str(target), "1", "no-compile"))
    assert deployed["result"] == [12.0, 12.0]
    assert deployed["om"] == compiled["om"]
    assert [line.split(":")[0] for line in deployed["report"]] == ["cache"] * 4
    assert " hit " in deployed["report"][0]


def test_two_processes_compiling_one_key_at_once_leave_a_consistent_cache(tmp_path, cache_dir):
    first, second = (run_script(tmp_path, str(cache_dir), "0", "compile") for _ in range(2))
    outcomes = [outcome(first), outcome(second)]
    assert outcomes[0]["om"] == outcomes[1]["om"]
    assert sorted(" hit " in o["report"][-4] for o in outcomes) == [False, True]
    (entry,) = read_index(str(cache_dir), "deploy")
    assert hashlib.sha256((cache_dir / entry.cache_file_name).read_bytes()).hexdigest() == outcomes[0]["om"]
    assert not [name for name in os.listdir(cache_dir) if name.startswith(".tmp-")]
    assert cli(["cache", "verify", str(cache_dir)]) == 0


# --- dfir cache ls | verify | prune --------------------------------------------------------------------

def test_cache_ls_lists_models_and_units(cache_dir, capsys):
    dfir.compile(build(), options(cache_dir))
    dfir.compile(build(offset=4), options(cache_dir, **{"ge.runFlag": "0"}))
    (cache_dir / "notes.txt").write_text("mine")
    first, second = read_index(str(cache_dir), KEY)
    assert cli(["cache", "ls", str(cache_dir)]) == 0
    lines = capsys.readouterr().out.splitlines()
    units = sum(p.stat().st_size for p in (cache_dir / KEY).iterdir())
    assert lines == [
        f"{KEY}: 2 cached models, 4 subgraph units ({units} bytes)",
        f"  {first.cache_file_name}  {(cache_dir / first.cache_file_name).stat().st_size} bytes  "
        f"{first.fingerprint[:23]}",
        f"  {second.cache_file_name}  {(cache_dir / second.cache_file_name).stat().st_size} bytes  "
        f"{second.fingerprint[:23]}  offline",
        "not cache files: notes.txt"]


def test_cache_verify_reports_each_bad_file_and_fails(cache_dir, capsys):
    dfir.compile(build(), options(cache_dir))
    (entry,) = read_index(str(cache_dir), KEY)
    path = cache_dir / entry.cache_file_name
    path.write_bytes(path.read_bytes()[:-1])
    assert cli(["cache", "verify", str(cache_dir)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"BAD  {entry.cache_file_name}: ")
    assert lines[1:4] == [f"ok   {KEY}/{name}" for name in sorted(os.listdir(cache_dir / KEY))]
    assert lines[4] == "4 cache files checked, 1 bad"


def test_cache_prune_removes_broken_unreferenced_and_leftover_files(cache_dir, capsys):
    dfir.compile(build(), options(cache_dir))
    dfir.compile(build(offset=4), options(cache_dir))
    first, second = read_index(str(cache_dir), KEY)
    (cache_dir / f"{KEY}_20200101000000000000.om").write_bytes(b"old")
    (cache_dir / f".tmp-{KEY}.idx.abc123").write_bytes(b"{")
    (cache_dir / "notes.txt").write_text("mine")
    assert cli(["cache", "prune", str(cache_dir), "--keep", "1"]) == 0
    assert read_index(str(cache_dir), KEY) == [second]
    assert sorted(os.listdir(cache_dir)) == sorted([f"{KEY}.idx", f"{KEY}.lock", second.cache_file_name,
                                                   KEY, "notes.txt"])
    assert len(os.listdir(cache_dir / KEY)) == 3  # the kept model's two process points and its graph
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "removed 4 files"
    assert f"removed {cache_dir / first.cache_file_name}" in out
    assert cli(["cache", "verify", str(cache_dir)]) == 0


def test_cache_prune_refuses_a_keep_below_one(cache_dir, capsys):
    assert cli(["cache", "prune", str(cache_dir), "--keep", "0"]) == 1
    assert capsys.readouterr().err == "error: --keep must be at least 1, got 0\n"
