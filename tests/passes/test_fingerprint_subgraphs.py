"""Pass `fingerprint-subgraphs`: structural keys per process point and graph; and the compile
cache's frontend keys, computed from the frontend objects before any IR exists.

Keys ignore SSA names and cloudpickle's per-process class ids; they change with anything that
changes what a process point compiles to (its ops, weights, UDF code and the values it captures)
and with the compile salt, and a change in one process point changes no other point's key.
"""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from dfir.core.canonical_payload import canonical_payload
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.driver.cache.settings import compile_salt
from dfir.driver.job import make_context, print_module
from dfir.frontend.cache_keys import frontend_keys
from dfir.frontend.dataflow import names
from dfir.frontend.dataflow.pyflow import UdfSpec
from dfir.frontend.importer import import_flow_graph
from dfir.ge.graph import Graph
from dfir.passes.fingerprint_subgraphs import FingerprintSubgraphs, fingerprint_of

OFFSET = 10


def fingerprints(module: ModuleOp, salt: str = "") -> dict[str, str]:
    """Run the pass; every symbol's fingerprint (None for ops that get none)."""
    FingerprintSubgraphs(salt=salt).apply(make_context(), module)
    return {op.sym_name.data: fingerprint_of(op) for op in module.ops}


def make_udf(constant: int):
    def shift(x):
        return x + constant
    return df.pyflow(shift)


def offset_by_global(x):
    return x + OFFSET


def ge_stage(index: int, op: str, scale: float) -> df.GraphProcessPoint:
    graph = Graph(f"stage{index}")
    x = graph.data(0, shape=[-1, 2], dtype=dt.DT_FLOAT, name="x")
    graph.set_outputs([getattr(graph, op)(x, graph.const(np.full([2], scale, np.float32)))])
    return df.GraphProcessPoint(df.Framework.ONNX, graph, name=f"stage{index}")


def pipeline(spec) -> ModuleOp:
    """A chain of UDF stages (`("udf", constant)`) and GE stages (`("ge", op, scale)`)."""
    names.reset()
    out = df.FlowData(name="x")
    for index, stage in enumerate(spec):
        if stage[0] == "udf":
            out = make_udf(stage[1]).fnode()(out)
        else:
            out = ge_stage(index, stage[1], stage[2]).fnode(1, 1, name=f"ge{index}")(out)
    return import_flow_graph(df.FlowGraph([out], name="pipeline"))


SPEC = [("udf", 1), ("ge", "mul", 2.0), ("udf", 2), ("ge", "add", 0.5)]


def test_every_process_point_ge_graph_and_graph_gets_a_fingerprint():
    module = pipeline(SPEC)
    keys = fingerprints(module)
    assert sorted(keys) == ["pipeline", "shift_1_pp", "shift_pp", "stage1", "stage1_pp", "stage3", "stage3_pp"]
    assert all(re.fullmatch(r"sha256:[0-9a-f]{64}", key) for key in keys.values())
    assert len(set(keys.values())) == len(keys)


def test_the_summary_counts_what_was_fingerprinted():
    module = pipeline(SPEC)
    fingerprints(module)
    assert FingerprintSubgraphs().summary(module) == \
        "fingerprinted 2 df.func_pp, 1 df.graph, 2 df.graph_pp, 2 ge.graph"


def test_keys_are_deterministic_and_running_the_pass_again_keeps_them():
    module = pipeline(SPEC)
    first = fingerprints(module)
    assert fingerprints(module) == first
    assert fingerprints(pipeline(SPEC)) == first


def _renamed(text: str, draw_name) -> str:
    """`text` with every SSA name replaced through `draw_name` (one new name per old name)."""
    mapping: dict[str, str] = {}

    def rename(match):
        return "%" + mapping.setdefault(match[1], draw_name(len(mapping)))
    return re.sub(r"%([A-Za-z_$.][\w$.]*|\d+)", rename, text)


@settings(max_examples=25, deadline=None)
@given(st.randoms(use_true_random=False))
def test_renaming_values_keeps_every_key(rng):
    text = print_module(pipeline(SPEC))
    order = list(range(1000))
    rng.shuffle(order)
    renamed = _renamed(text, lambda i: f"v{order[i]}" if rng.random() < 0.5 else f"{order[i]}")
    assert renamed != text
    reparsed = Parser(make_context(), renamed).parse_module()
    assert fingerprints(reparsed) == fingerprints(Parser(make_context(), text).parse_module())


stages = st.lists(
    st.one_of(st.builds(lambda c: ("udf", c), st.integers(0, 10**6)),
              st.builds(lambda op, s: ("ge", op, s), st.sampled_from(["add", "sub", "mul"]),
                        st.floats(-8, 8, allow_nan=False, width=32))),
    min_size=2, max_size=6)


def _changed(spec, index: int, salt: int):
    """`spec` with stage `index` changed: another constant, op or weight, never a value in use."""
    stage = spec[index]
    if stage[0] == "udf":
        used = {s[1] for s in spec if s[0] == "udf"}
        new = max(used) + 1 + salt
        return [*spec[:index], ("udf", new), *spec[index + 1:]]
    ops = ["add", "sub", "mul"]
    new_stage = ("ge", ops[(ops.index(stage[1]) + 1) % 3], stage[2]) if salt % 2 else ("ge", stage[1], stage[2] + 1)
    return [*spec[:index], new_stage, *spec[index + 1:]]


def _distinct_udf_constants(spec):
    udfs = [s[1] for s in spec if s[0] == "udf"]
    return len(udfs) == len(set(udfs))


@settings(max_examples=30, deadline=None)
@given(stages, st.data())
def test_a_change_in_one_subgraph_changes_only_its_keys_and_the_graphs(spec, data):
    if not _distinct_udf_constants(spec):
        spec = [("udf", i) if s[0] == "udf" else s for i, s in enumerate(spec)]
    index = data.draw(st.integers(0, len(spec) - 1))
    before = fingerprints(pipeline(spec))
    after = fingerprints(pipeline(_changed(spec, index, data.draw(st.integers(0, 3)))))
    assert sorted(before) == sorted(after)
    changed = {sym for sym in before if before[sym] != after[sym]}
    if spec[index][0] == "udf":
        udf_symbols = [sym for sym in before if sym.startswith("shift")]
        position = [i for i, s in enumerate(spec) if s[0] == "udf"].index(index)
        expected = {udf_symbols[position], "pipeline"}
    else:
        expected = {f"stage{index}", f"stage{index}_pp", "pipeline"}
    assert changed == expected


def test_a_udf_capturing_another_closure_value_gets_another_key():
    one = fingerprints(pipeline([("udf", 1)]))
    two = fingerprints(pipeline([("udf", 2)]))
    assert one["shift_pp"] != two["shift_pp"]
    assert fingerprints(pipeline([("udf", 1)])) == one


def test_a_udf_reading_another_global_value_gets_another_key(monkeypatch):
    def graph():
        names.reset()
        x = df.FlowData(name="x")
        return import_flow_graph(df.FlowGraph([df.pyflow(offset_by_global).fnode()(x)]))
    before = fingerprints(graph())["offset_by_global_pp"]
    monkeypatch.setattr(sys.modules[__name__], "OFFSET", 11)
    after = fingerprints(graph())["offset_by_global_pp"]
    assert before != after
    monkeypatch.setattr(sys.modules[__name__], "OFFSET", 10)
    assert fingerprints(graph())["offset_by_global_pp"] == before


def test_the_salt_changes_every_key():
    plain = fingerprints(pipeline(SPEC))
    salted = fingerprints(pipeline(SPEC), salt="sha256:1")
    assert all(plain[sym] != salted[sym] for sym in plain)


def test_compile_options_that_shape_the_output_change_the_salt_and_others_do_not(tmp_path):
    pipeline_text = "sort-nodes,place-nodes"
    base = compile_salt({"ge.exec.deviceId": "0"}, pipeline_text)
    assert compile_salt({"ge.exec.deviceId": "1"}, pipeline_text) != base
    assert compile_salt({"ge.exec.deviceId": "0"}, "sort-nodes,place-nodes{default-device=\"0:0:1\"}") != base
    same = {"ge.exec.deviceId": "0", "ge.graph_compiler_cache_dir": str(tmp_path), "ge.graph_key": "k",
            "ge.runFlag": "0", "log_level": "3"}
    assert compile_salt(same, pipeline_text) == base


def test_the_deploy_info_file_contents_are_in_the_salt(tmp_path):
    deploy = tmp_path / "deploy.json"
    deploy.write_text('{"deploy_info": []}')
    options = {"ge.experiment.data_flow_deploy_info_path": str(deploy)}
    first = compile_salt(options, "")
    deploy.write_text('{"deploy_info": [{"flow_node_name": "a", "logic_device_id": "0:0:0:0"}]}')
    assert compile_salt(options, "") != first


CLASS_UDF_SCRIPT = textwrap.dedent("""
    import dfir.dataflow as df
    from dfir.frontend.importer import import_flow_graph
    from dfir.driver.job import make_context
    from dfir.passes.fingerprint_subgraphs import FingerprintSubgraphs, fingerprint_of
    from dfir.frontend.cache_keys import frontend_keys

    @df.pyflow
    class Scale:
        def __init__(self, factor):
            self.factor = factor

        @df.method()
        def scale(self, x):
            return x * self.factor

    x = df.FlowData(name="x")
    graph = df.FlowGraph([Scale.fnode(3).scale(x)])
    print(frontend_keys(graph, "").graph_key)
    module = import_flow_graph(graph)
    FingerprintSubgraphs().apply(make_context(), module)
    print(fingerprint_of(module.ops.first))
    print(module.ops.first.payload.data)
""")


def test_a_class_udf_has_the_same_key_in_every_process(tmp_path):
    script = tmp_path / "class_udf.py"
    script.write_text(CLASS_UDF_SCRIPT)
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(seed), "PATH": ""}, cwd=tmp_path).stdout.split()
            for seed in (1, 2)]
    (frontend1, key1, payload1), (frontend2, key2, payload2) = runs
    assert payload1 == payload2, "the class ids cloudpickle draws at random are derived from the payload"
    assert key1 == key2 and frontend1 == frontend2


def test_canonical_payload_replaces_class_ids_only():
    import cloudpickle

    hex_text = "0123456789abcdef" * 2

    class Local:
        tag = hex_text

    # user data shaped like a class id (32 hex digits, then None) stays as it is
    data = cloudpickle.dumps((Local, ("".join(hex_text), None)), protocol=5)
    canonical = canonical_payload(data)
    assert canonical.count(b"<class-tracker-id>") == 1
    assert canonical.count(b"0123456789abcdef0123456789abcdef") == 2
    assert canonical_payload(b"not a pickle _make_skeleton_class") == b"not a pickle _make_skeleton_class"
    assert canonical_payload(b"plain bytes") == b"plain bytes"


# --- frontend keys ---------------------------------------------------------------------------------

FACTOR = 3  # read by `scaled_by_global`


def scaled_by_global(x):
    return x * FACTOR


def plus_one(x):
    return x + 1


def plus_two(x):
    return x + 2


def weights(change: str) -> np.ndarray:
    array = np.arange(4, dtype=np.float32)
    if change == "weight byte":
        array.view(np.uint8)[5] ^= 1
    return array


def frontend_graph(change: str = "") -> df.FlowGraph:
    """x, y -> plus_one -> plus_captured(., y) -> GE graph -> out, built afresh (every object on
    the same line whatever the change); `change` names the one thing built differently."""
    names.reset()
    x, y = df.FlowData(name="x"), df.FlowData(name="z" if change == "data name" else "y")
    captured = 5 if change == "closure value" else 4

    def plus_captured(a, b):
        return a + b + captured
    first = df.pyflow(plus_two if change == "UDF code" else plus_one).fnode()(x)
    inputs = (y, first) if change == "wiring" else (first, y)
    second = df.pyflow(plus_captured).fnode()(*inputs)
    graph = Graph("affine")
    data = graph.data(0, shape=[-1, 4], dtype=dt.DT_FLOAT, name="x")
    graph.set_outputs([graph.add(data, graph.const(weights(change)))])
    node = df.GraphProcessPoint(df.Framework.ONNX, graph, name="affine").fnode(
        1, 1, name="renamed" if change == "node name" else "affine_node")
    if change == "alias":
        node.set_alias("deployed")
    if change in ("node attr", "node attr bool"):
        node.set_attr("priority", True if change == "node attr bool" else 1)
    options = {"ge.exec.deviceId": "1"} if change == "graph option" else {}
    return df.FlowGraph([node(second)], graph_options=options, name="keyed")


CHANGES = ["UDF code", "closure value", "wiring", "weight byte", "node name", "graph option",
           "data name", "alias", "node attr", "node attr bool"]


def graph_key(graph, salt: str = "") -> str:
    return frontend_keys(graph, salt).graph_key


def test_building_the_same_graph_again_keeps_its_frontend_key():
    key = graph_key(frontend_graph())
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", key)
    assert graph_key(frontend_graph()) == key


def test_every_kind_of_change_gets_its_own_frontend_key():
    keys = {change: graph_key(frontend_graph(change)) for change in ["", *CHANGES]}
    assert len(set(keys.values())) == len(keys), keys


def test_a_udf_reading_another_global_value_gets_another_frontend_key(monkeypatch):
    def graph():
        names.reset()
        return df.FlowGraph([df.pyflow(scaled_by_global).fnode()(df.FlowData(name="x"))])
    before = graph_key(graph())
    monkeypatch.setattr(sys.modules[__name__], "FACTOR", 4)
    assert graph_key(graph()) != before
    monkeypatch.setattr(sys.modules[__name__], "FACTOR", 3)
    assert graph_key(graph()) == before


def test_a_compile_option_changes_the_frontend_key_through_the_salt():
    graph = frontend_graph()
    salts = [compile_salt({"ge.exec.deviceId": device}, "sort-nodes") for device in ("0", "1")]
    assert graph_key(graph, salts[0]) != graph_key(graph, salts[1])
    assert graph_key(graph, salts[0]) == graph_key(frontend_graph(), salts[0])


def small_graph(change: str = "") -> Graph:
    graph = Graph("renamed" if change == "name" else "small")
    x = graph.data(0, shape=[2, 2] if change == "input shape" else [-1, 2], dtype=dt.DT_FLOAT, name="x")
    bias = np.array([1.0, 2.0], np.float32)
    if change == "weight byte":
        bias.view(np.uint8)[0] ^= 1
    constant = graph.const(bias, name="b" if change == "node name" else None)
    y = (graph.mul if change == "op" else graph.add)(x, constant)
    z = graph.softmax(y, axis=0 if change == "attribute" else -1)
    graph.set_outputs([y, z] if change == "outputs" else [z])
    return graph


def test_a_ge_graph_content_key_changes_with_any_op_attribute_weight_or_output():
    changes = ["", "name", "input shape", "weight byte", "op", "node name", "attribute", "outputs"]
    keys = [small_graph(change).content_key() for change in changes]
    assert len(set(keys)) == len(keys)
    assert small_graph().content_key() == keys[0]
    assert graph_key(small_graph()) == graph_key(small_graph()) != graph_key(small_graph("op"))


def test_a_point_key_follows_its_graph_and_symbols_not_the_rest():
    def keys_of(change: str):
        graph = frontend_graph(change)
        return frontend_keys(graph, ""), graph.outputs[0].node.process_points[0]
    keys, point = keys_of("")
    key = keys.point_key(point, "affine_pp", "affine")
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", key)
    other_keys, other_point = keys_of("UDF code")
    assert other_keys.point_key(other_point, "affine_pp", "affine") == key
    changed_keys, changed_point = keys_of("weight byte")
    assert changed_keys.point_key(changed_point, "affine_pp", "affine") != key
    assert keys.point_key(point, "affine_1_pp", "affine") != key
    assert keys.point_key(point, "affine_pp", "affine_1") != key
    assert other_keys.point_key(point, "affine_pp", "affine") is None, "a point another walk saw"


def test_a_flow_key_follows_the_graph_its_symbols_and_the_resource_config_not_contents():
    symbols = ["plus_one_pp", "plus_captured_pp", "affine_pp"]

    def flow_key(change: str, node_symbols=symbols, resource_config=None) -> str:
        return frontend_keys(frontend_graph(change), "").flow_key(node_symbols, "keyed", resource_config)
    key = flow_key("")
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", key)
    assert [flow_key(change) for change in ("closure value", "weight byte")] == [key] * 2
    renamed = ("UDF code", "wiring", "node name", "alias", "data name", "graph option")  # the UDF's name is its function's
    assert all(flow_key(change) != key for change in renamed)
    assert flow_key("", [*symbols[:2], "affine_1_pp"]) != key
    assert flow_key("", resource_config=b"{}") != key


def test_an_invoked_closure_has_no_point_key():
    names.reset()
    graph = Graph("called")
    x = graph.data(0, shape=[2], dtype=dt.DT_FLOAT, name="x")
    graph.set_outputs([graph.relu(x)])
    closure = df.GraphProcessPoint(df.Framework.ONNX, graph, name="called")
    caller = df.FuncProcessPoint(py_func=df.pyflow(plus_one), name="caller")
    caller.add_invoked_closure("called", closure)
    node = df.FlowNode(1, 1, name="calling")
    node.add_process_point(caller)
    keys = frontend_keys(df.FlowGraph([node(df.FlowData(name="x"))]), "")
    assert keys.point_key(closure, "called_pp", "called") is None


FRONTEND_ATTRIBUTES = {
    df.FlowGraph: {"outputs", "graph_options", "name", "align", "exception_catch", "contains_n_mapping_node",
                   "_model", "_compiled"},
    df.FlowData: {"schema", "name", "loc"},
    df.FlowNode: {"input_num", "output_num", "name", "alias", "loc", "process_points", "input_map",
                  "input_batches", "output_map", "attrs", "balance", "input_anchors"},
    df.FuncProcessPoint: {"compile_config_path", "workspace_dir", "name", "init_params", "invoked_closures",
                          "udf"},
    UdfSpec: {"payload", "funcs", "resources"},
    df.GraphProcessPoint: {"framework", "graph", "load_params", "compile_config_path", "name"},
    Graph: {"_name", "_nodes", "_value_count", "_names", "_data", "_outputs", "_content", "_locations"},
}


def test_the_frontend_key_knows_every_attribute_of_the_frontend_objects():
    """A new attribute on a frontend object must enter the frontend key (dfir/cache/frontend.py),
    when the importer reads it, and then be listed here (FlowGraph's `_model` and `_compiled` are
    the runtime's, not imported; Graph's private fields are all behind `content_key`)."""
    flow = frontend_graph()
    node = flow.outputs[0].node
    point = node.process_points[0]
    udf_point = node.input_anchors[0].node.process_points[0]
    objects = [flow, node.input_anchors[0].node.input_anchors[1], node, point, point.graph, udf_point,
               udf_point.udf]
    assert {type(o): set(vars(o)) for o in objects} == FRONTEND_ATTRIBUTES


def test_stable_tracker_ids_keep_distinct_classes_distinct():
    import cloudpickle

    from dfir.core.canonical_payload import canonical_payload, stable_tracker_ids

    def make(k):
        class Twin:  # two classes of one name, shipped by value
            factor = k
        return Twin
    first, second = make(2), make(3)
    data = cloudpickle.dumps([first, second, first], protocol=5)
    stable = stable_tracker_ids(data)
    assert len(stable) == len(data) and canonical_payload(stable) == canonical_payload(data)
    rebuilt = cloudpickle.loads(stable)
    assert [cls.factor for cls in rebuilt] == [2, 3, 2] and rebuilt[0] is rebuilt[2] is not rebuilt[1]
