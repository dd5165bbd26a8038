"""The `df` dialect from Python: building IR with the op constructors, printing and parsing it back,
the verifier's errors, the attributes' valid and invalid values, and the `sort-nodes` and
`place-nodes` passes on random and hand-built graphs. (The lit tests under `lit_tests/dialects/df`
and `lit_tests/passes` check the textual forms; these check what Python callers rely on.)"""
from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Operation, Region
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

import dfir.data_type as dt
from dfir.dialects import ge
from dfir.dialects.df import (DataOp, FuncPpOp, GatherOp, GraphOp, GraphPpOp, InvokedClosureOp, NodeOp,
                              OutputOp)
from dfir.dialects.df_attrs import AlignAttr, BalanceAttr, DeviceAttr, FuncAttr, InstanceAttr
from dfir.driver.job import make_context, print_module
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.passes.place_nodes import PlaceNodes
from dfir.passes.sort_nodes import SortNodes

# --- helpers -------------------------------------------------------------------------------------


def _parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def _parse_attribute(text: str) -> Attribute:
    return Parser(make_context(), text).parse_attribute()


def _attribute_text(attr: Attribute) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_attribute(attr)
    return stream.getvalue()


def _assert_round_trips(module: ModuleOp) -> str:
    """Print `module`, parse the text back, verify it, and check it prints the same text."""
    text = print_module(module)
    reparsed = _parse(text)
    reparsed.verify()
    assert print_module(reparsed) == text
    return text


def _body(*ops: Operation) -> Region:
    return Region(Block(list(ops)))


def _ports_pp(sym: str, input_num: int, output_num: int) -> FuncPpOp:
    """A process point whose one func owns every port of an `input_num -> output_num` node."""
    return FuncPpOp(sym, "py_func", [FuncAttr("f", range(input_num), range(output_num))])


def _relu_ge_graph() -> Operation:
    graph = Graph("relu")
    x = graph.data(0, shape=[-1, 4], dtype=dt.DT_FLOAT, name="x")
    graph.set_outputs([graph.relu(x)])
    graph_op = graph.to_ir()
    for op in graph_op.block.ops:  # the documented form leaves out the builder's line numbers
        op.attributes.pop(ge.LOC_ATTR, None)
    return graph_op


# --- building, printing and parsing back ---------------------------------------------------------

def _pipeline_module() -> ModuleOp:
    """Every df op and attribute, built with the constructors, around a GE graph."""
    methods = FuncPpOp("methods_pp", "py_func",
                       [FuncAttr("first", [0], [0]), FuncAttr("second", [1], [1], stream_input=True)],
                       payload="gASV", closures=[InvokedClosureOp("invoke_relu", "relu_pp")])
    frames = DataOp("FlowData", 0)
    labels = DataOp("FlowData_1", 1, {"schema": StringAttr("f32")})
    scatter = NodeOp("scatter", "methods_pp", [frames.result, labels.result], 2, 2,
                     {"loc": StringAttr("pipeline.py:7"), "balance": BalanceAttr("scatter")})
    work = NodeOp("work_0", "relu_pp", [scatter.outputs[0]], 1, 1,
                  {"device": DeviceAttr([0, 0, 1, 0]), "instance": InstanceAttr(0, 2)})
    gather = NodeOp("gather", "methods_pp", [work.outputs[0], scatter.outputs[1]], 2, 2,
                    {"device": DeviceAttr(), "balance": BalanceAttr("gather")})
    graph = GraphOp("pipeline", _body(frames, labels, scatter, work, gather, OutputOp(gather.outputs)),
                    {"ge.runFlag": "1", "ge.graph_key": "pipeline"})
    graph.properties["align"] = AlignAttr(256, 60_000, dropout=True)
    return ModuleOp([_relu_ge_graph(), GraphPpOp("relu_pp", "relu"), methods, graph])


PIPELINE_TEXT = """\
builtin.module {
  ge.graph @relu {
    %x = ge.data 0 "x" : !ge.tensor<[-1, 4], f32>
    %relu = ge.relu %x {name = "relu_0"} : !ge.tensor<[-1, 4], f32>
    ge.output %relu : !ge.tensor<[-1, 4], f32>
  }
  df.graph_pp @relu_pp graph @relu {framework = "ge"}
  df.func_pp @methods_pp [#df.func<"first"(0) -> (0)>, #df.func<"second"(1) -> (1), stream_input>] \
{kind = "py_func"} payload "gASV" {
    df.invoked_closure "invoke_relu" @relu_pp
  }
  df.graph @pipeline attributes {options = {ge.graph_key = "pipeline", ge.runFlag = "1"}, \
align = #df.align<cache = 256, timeout = 60000, dropout>} {
    %0 = df.data "FlowData" index 0
    %1 = df.data "FlowData_1" index 1 {schema = "f32"}
    %2, %3 = df.node "scatter"(%0, %1) pp @methods_pp {loc = "pipeline.py:7", \
balance = #df.balance<scatter>} : 2 -> 2
    %4 = df.node "work_0"(%2) pp @relu_pp {device = #df.device<0:0:1:0>, \
instance = #df.instance<0 of 2>} : 1 -> 1
    %5, %6 = df.node "gather"(%4, %3) pp @methods_pp {device = #df.device<host>, \
balance = #df.balance<gather>} : 2 -> 2
    df.output %5, %6
  }
}
"""


def test_constructed_module_verifies_and_prints_the_documented_form():
    module = _pipeline_module()
    module.verify()
    assert print_module(module) == PIPELINE_TEXT


def test_printed_module_parses_back_to_identical_text():
    assert _assert_round_trips(_pipeline_module()) == PIPELINE_TEXT


def test_parsed_ops_are_the_constructor_classes_with_their_properties():
    graph = next(op for op in _parse(PIPELINE_TEXT).ops if isinstance(op, GraphOp))
    assert [type(op) for op in graph.body.block.ops] == [DataOp, DataOp, NodeOp, NodeOp, NodeOp, OutputOp]
    assert [d.data_name.data for d in graph.data_ops] == ["FlowData", "FlowData_1"]
    assert [(n.node_name.data, n.pp.root_reference.data, n.input_num.value.data, n.output_num.value.data)
            for n in graph.node_ops] == [("scatter", "methods_pp", 2, 2), ("work_0", "relu_pp", 1, 1),
                                         ("gather", "methods_pp", 2, 2)]
    assert graph.align == AlignAttr(256, 60_000, dropout=True)
    assert graph.node_ops[1].attributes["instance"] == InstanceAttr(0, 2)


def test_func_attr_and_device_attr_accessors():
    func = FuncAttr("merge", [2, 0], [1], stream_input=True)
    assert (func.input_ports, func.output_ports, func.is_stream_input) == ([2, 0], [1], True)
    assert not FuncAttr("f", [], []).is_stream_input
    assert (DeviceAttr().is_host, DeviceAttr().spelling()) == (True, "-1")
    assert (DeviceAttr([0, 1, 2, 1]).is_host, DeviceAttr([0, 1, 2, 1]).spelling()) == (False, "0:1:2:1")


def test_node_label_names_the_node_and_its_location():
    x = DataOp("x", 0)
    located = NodeOp("relu", "pp", [x.result], 1, 1, {"loc": StringAttr("a.py:3")})
    assert NodeOp("relu", "pp", [x.result], 1, 1).label == 'node "relu"'
    assert located.label == 'node "relu" (a.py:3)'


def test_graph_properties_and_discardable_attributes_are_kept_apart_when_parsed():
    module = _parse('df.graph @g attributes {options = {"k" = "v"}, owner = "team"} {\n  df.output\n}')
    graph = module.ops.first
    assert set(graph.properties) == {"sym_name", "options"}
    assert set(graph.attributes) == {"owner"}


# --- verifier errors -----------------------------------------------------------------------------

def _one_node_graph(pp: FuncPpOp | None, input_num: int = 1, inputs: int = 1) -> ModuleOp:
    """`x -> node "relu" (a.py:3) -> output`, the node running @relu_pp with `inputs` operands."""
    x = DataOp("x", 0)
    node = NodeOp("relu", "relu_pp", [x.result] * inputs, input_num, 1, {"loc": StringAttr("a.py:3")})
    graph = GraphOp("g", _body(x, node, OutputOp(node.outputs)))
    return ModuleOp([*([pp] if pp else []), graph])


def _too_few_inputs() -> ModuleOp:
    return _one_node_graph(_ports_pp("relu_pp", 2, 1), input_num=2, inputs=1)


def _missing_process_point() -> ModuleOp:
    return _one_node_graph(None)


def _unowned_input_port() -> ModuleOp:
    return _one_node_graph(FuncPpOp("relu_pp", "py_func", [FuncAttr("f", [0], [0])]), input_num=2, inputs=2)


def _cycle() -> ModuleOp:
    """ping consumes pong and pong consumes ping; the back edge is set after both exist."""
    x = DataOp("x", 0)
    ping = NodeOp("ping", "pass_pp", [x.result, x.result], 2, 1)
    pong = NodeOp("pong", "pass_pp", [ping.outputs[0], x.result], 2, 1)
    ping.operands = [x.result, pong.outputs[0]]
    graph = GraphOp("cycle", _body(x, ping, pong, OutputOp(pong.outputs)))
    return ModuleOp([_ports_pp("pass_pp", 2, 1), graph])


def _data_graph(*datas: DataOp, outputs: Sequence[DataOp] | None = None) -> ModuleOp:
    used = datas if outputs is None else outputs
    return ModuleOp([GraphOp("inputs", _body(*datas, OutputOp([d.result for d in used])))])


def _unused_flow_data() -> ModuleOp:
    used, unused = DataOp("used", 0), DataOp("unused", 1)
    return _data_graph(used, unused, outputs=[used])


def _duplicate_nodes() -> ModuleOp:
    x = DataOp("x", 0)
    first = NodeOp("relu", "relu_pp", [x.result], 1, 1, {"loc": StringAttr("a.py:1")})
    second = NodeOp("relu", "relu_pp", [first.outputs[0]], 1, 1, {"loc": StringAttr("a.py:2")})
    graph = GraphOp("twice", _body(x, first, second, OutputOp(second.outputs)))
    return ModuleOp([_ports_pp("relu_pp", 1, 1), graph])


def _missing_output() -> ModuleOp:
    x = DataOp("x", 0)
    node = NodeOp("relu", "relu_pp", [x.result], 1, 1)
    return ModuleOp([_ports_pp("relu_pp", 1, 1), GraphOp("open", _body(x, node))])


VERIFY_ERRORS: list[tuple[Callable[[], ModuleOp], str]] = [
    (_too_few_inputs, 'node "relu" (a.py:3): expected 2 inputs (input_num), got 1'),
    (_missing_process_point, 'node "relu" (a.py:3): process point @relu_pp does not exist'),
    (_unowned_input_port, 'node "relu" (a.py:3): the funcs of @relu_pp own input ports [0], '
                          "expected each of 0..1 exactly once"),
    (_cycle, "df.graph @cycle: the graph has a cycle: pong -> ping -> pong"),
    (_unused_flow_data, 'df.graph @inputs: flow data "unused" is not used by any node or output'),
    (lambda: _data_graph(DataOp("x", 0), DataOp("x", 1)), 'df.graph @inputs: flow data "x" is defined twice'),
    (lambda: _data_graph(DataOp("a", 0), DataOp("b", 2)),
     "df.graph @inputs: flow data indexes [0, 2] must be 0..1, each used once"),
    (_duplicate_nodes, 'df.graph @twice: duplicate node name: node "relu" (a.py:1) and node "relu" (a.py:2)'),
    (lambda: ModuleOp([GraphPpOp("mlp_pp", "mlp")]), "df.graph_pp @mlp_pp: GE graph @mlp does not exist"),
    (_missing_output, "Operation df.node terminates block in single-block region but is not a terminator"),
]


@pytest.mark.parametrize("build, message", VERIFY_ERRORS, ids=[m for _, m in VERIFY_ERRORS])
def test_verifier_rejects_with_exact_message(build: Callable[[], ModuleOp], message: str):
    with pytest.raises(VerifyException) as caught:
        build().verify()
    assert str(caught.value) == message


def test_data_ops_may_not_live_outside_a_graph():
    """The message is the trait's; the exception's note shows the module with the op marked."""
    with pytest.raises(VerifyException) as caught:
        ModuleOp([DataOp("x", 0)]).verify()
    assert str(caught.value) == "'df.data' expects parent op 'df.graph'"
    (note,) = caught.value.__notes__
    assert "  | Operation does not verify: 'df.data' expects parent op 'df.graph'\n" in note


# --- df.gather and the instances of a replicated node ---------------------------------------------

def _instances_module(instances: Sequence[InstanceAttr | None],
                      gathered: Sequence[int] | None = None) -> ModuleOp:
    """`x -> node "a" (one op per entry of `instances`) -> df.gather of the ops `gathered` (all by
    default, in order; none for []: the ops are the outputs) -> output`."""
    x = DataOp("x", 0)
    ops = [NodeOp("a", "unary_pp", [x.result], 1, 1, {"instance": i} if i is not None else {})
           for i in instances]
    if gathered == []:
        graph = GraphOp("g", _body(x, *ops, OutputOp([op.outputs[0] for op in ops])))
        return ModuleOp([_ports_pp("unary_pp", 1, 1), graph])
    gather = GatherOp([ops[k].outputs[0] for k in (range(len(ops)) if gathered is None else gathered)])
    graph = GraphOp("g", _body(x, *ops, gather, OutputOp([gather.result])))
    return ModuleOp([_ports_pp("unary_pp", 1, 1), graph])


def test_gather_of_every_instance_verifies_and_round_trips():
    module = _instances_module([InstanceAttr(0, 3), InstanceAttr(1, 3), InstanceAttr(2, 3)])
    module.verify()
    text = _assert_round_trips(module)
    assert "    %4 = df.gather %1, %2, %3\n" in text
    _instances_module([InstanceAttr(1, 2), InstanceAttr(0, 2)], []).verify()  # any order in the block


@pytest.mark.parametrize("instances, gathered, message", [
    ([InstanceAttr(0, 1)], None,
     "df.gather merges the instances of a node and needs at least 2 operands, got 1"),
    ([InstanceAttr(0, 2), InstanceAttr(1, 2)], [1, 0],
     'df.gather operand 0 must come from #df.instance<0 of 2> of node "a", got #df.instance<1 of 2>'),
    ([InstanceAttr(0, 3), InstanceAttr(1, 3), InstanceAttr(2, 3)], [0, 1],
     'df.gather operand 0 must come from #df.instance<0 of 2> of node "a", got #df.instance<0 of 3>'),
    ([InstanceAttr(0, 2), InstanceAttr(1, 3)], [], 'df.graph @g: duplicate node name: node "a" and node "a"'),
    ([InstanceAttr(1, 2), InstanceAttr(1, 2)], [], 'df.graph @g: duplicate node name: node "a" and node "a"'),
    ([InstanceAttr(0, 2), None], [], 'df.graph @g: duplicate node name: node "a" and node "a"'),
])
def test_gather_and_instances_are_checked(instances, gathered, message):
    with pytest.raises(VerifyException) as caught:
        _instances_module(instances, gathered).verify()
    assert str(caught.value) == message


# --- sort-nodes on random DAGs -------------------------------------------------------------------

@dataclass(frozen=True)
class NodeSpec:
    inputs: tuple[int, ...]      # indexes into the values defined so far (flow data, then node outputs)
    output_num: int


@dataclass(frozen=True)
class DagSpec:
    data_count: int
    nodes: tuple[NodeSpec, ...]
    outputs: tuple[int, ...]     # graph outputs, as value indexes
    block_order: tuple[int, ...]  # a permutation of the data and node ops, in creation order


@st.composite
def dag_specs(draw) -> DagSpec:
    """1..40 nodes, each fed by up to 3 earlier values; random graph outputs; a shuffled block."""
    data_count = draw(st.integers(1, 3))
    value_count, nodes = data_count, []
    for _ in range(draw(st.integers(1, 40))):
        inputs = draw(st.lists(st.integers(0, value_count - 1), max_size=3))
        output_num = draw(st.integers(0, 2))
        nodes.append(NodeSpec(tuple(inputs), output_num))
        value_count += output_num
    outputs = draw(st.lists(st.integers(0, value_count - 1), max_size=4))
    order = draw(st.permutations(range(data_count + len(nodes))))
    return DagSpec(data_count, tuple(nodes), tuple(outputs), tuple(order))


def _build_dag(spec: DagSpec, block_order: Sequence[int]) -> tuple[ModuleOp, GraphOp]:
    """The DAG's module; data and nodes are created in spec order and placed in `block_order`.

    Flow data that nothing consumes become graph outputs too (the verifier requires each be used).
    """
    datas = [DataOp(f"in{i}", i) for i in range(spec.data_count)]
    values = [d.result for d in datas]
    nodes, arities = [], set()
    for i, node_spec in enumerate(spec.nodes):
        arity = (len(node_spec.inputs), node_spec.output_num)
        arities.add(arity)
        node = NodeOp(f"n{i}", "pp_{}_{}".format(*arity), [values[v] for v in node_spec.inputs], *arity)
        nodes.append(node)
        values.extend(node.outputs)
    outputs = [values[v] for v in spec.outputs] + [d.result for d in datas if not d.result.uses]
    created = [*datas, *nodes]
    graph = GraphOp("dag", _body(*[created[i] for i in block_order], OutputOp(outputs)))
    pps = [_ports_pp("pp_{}_{}".format(*arity), *arity) for arity in sorted(arities)]
    return ModuleOp([*pps, graph]), graph


def _stable_topological_order(nodes: Sequence[NodeOp]) -> list[NodeOp]:
    """Reference order: the topological order that, at each step, takes the earliest-written node."""
    position = {node: i for i, node in enumerate(nodes)}
    edges = nx.DiGraph()
    edges.add_nodes_from(nodes)
    edges.add_edges_from((v.owner, n) for n in nodes for v in n.inputs if isinstance(v.owner, NodeOp))
    return list(nx.lexicographical_topological_sort(edges, key=position.__getitem__))


def _sort(module: ModuleOp) -> None:
    SortNodes().apply(make_context(), module)


@settings(max_examples=60, deadline=None)
@given(dag_specs())
def test_sort_nodes_orders_random_dags_topologically(spec: DagSpec):
    module, graph = _build_dag(spec, spec.block_order)
    module.verify()
    ops_before = list(graph.body.block.ops)
    expected_nodes = _stable_topological_order(graph.node_ops)
    _sort(module)
    ops_after = list(graph.body.block.ops)
    position = {op: i for i, op in enumerate(ops_after)}

    assert set(ops_after) == set(ops_before) and len(ops_after) == len(ops_before)
    assert all(position[v.owner] < position[op] for op in ops_after for v in op.operands)
    assert [d.index.value.data for d in ops_after[:spec.data_count]] == list(range(spec.data_count))
    assert ops_after[spec.data_count:-1] == expected_nodes
    assert isinstance(ops_after[-1], OutputOp)
    module.verify()
    sorted_text = _assert_round_trips(module)
    _sort(module)
    assert print_module(module) == sorted_text


@settings(max_examples=40, deadline=None)
@given(dag_specs())
def test_sort_nodes_leaves_a_sorted_graph_unchanged(spec: DagSpec):
    module, graph = _build_dag(spec, range(spec.data_count + len(spec.nodes)))
    ops_before = list(graph.body.block.ops)
    text_before = print_module(module)
    _sort(module)
    assert list(graph.body.block.ops) == ops_before
    assert print_module(module) == text_before


# --- attributes: valid values round-trip, invalid ones fail verification -------------------------

def _assert_attribute_round_trips(attr: Attribute, text: str) -> None:
    assert _attribute_text(attr) == text
    assert _parse_attribute(text) == attr


def _assert_invalid(build: Callable[[], Attribute], text: str, message: str) -> None:
    """Both building the attribute and parsing its text raise `message`."""
    with pytest.raises(VerifyException) as built:
        build()
    assert str(built.value) == message
    with pytest.raises(VerifyException) as parsed:
        _parse_attribute(text)
    assert str(parsed.value) == message


DEVICE_IDS = st.integers(-(2**31), 2**31 - 1)


@given(st.one_of(st.just([]), st.lists(DEVICE_IDS, min_size=3, max_size=4)))
def test_device_attr_valid_values_round_trip(ids: list[int]):
    spelled = ":".join(map(str, ids)) or "host"
    _assert_attribute_round_trips(DeviceAttr(ids), f"#df.device<{spelled}>")


@given(st.one_of(st.lists(DEVICE_IDS, min_size=1, max_size=2), st.lists(DEVICE_IDS, min_size=5, max_size=8)))
def test_device_attr_wrong_id_count_fails_verification(ids: list[int]):
    _assert_invalid(lambda: DeviceAttr(ids), f"#df.device<{':'.join(map(str, ids))}>",
                    f"#df.device has {len(ids)} ids, expected 3 or 4 (cluster:server:device[:numa]) or host")


@given(st.integers(1, 2**20).flatmap(lambda count: st.tuples(st.integers(0, count - 1), st.just(count))))
def test_instance_attr_valid_values_round_trip(index_count: tuple[int, int]):
    index, count = index_count
    _assert_attribute_round_trips(InstanceAttr(index, count), f"#df.instance<{index} of {count}>")


@given(st.integers(0, 2**20).flatmap(lambda count: st.tuples(st.integers(count, 2**21), st.just(count))))
def test_instance_attr_index_outside_count_fails_verification(index_count: tuple[int, int]):
    index, count = index_count
    _assert_invalid(lambda: InstanceAttr(index, count), f"#df.instance<{index} of {count}>",
                    f"#df.instance index {index} is outside [0, {count})")


def test_instance_attr_negative_index_fails_verification():
    with pytest.raises(VerifyException, match=r"^#df.instance index -1 is outside \[0, 3\)$"):
        InstanceAttr(-1, 3)


VALID_CACHE = st.integers(0, 1024)
VALID_TIMEOUT = st.one_of(st.just(-1), st.integers(1, 600_000))


def _align_text(cache: int, timeout: int, dropout: bool = False) -> str:
    return f"#df.align<cache = {cache}, timeout = {timeout}{', dropout' if dropout else ''}>"


@given(VALID_CACHE, VALID_TIMEOUT, st.booleans())
def test_align_attr_valid_values_round_trip(cache: int, timeout: int, dropout: bool):
    _assert_attribute_round_trips(AlignAttr(cache, timeout, dropout), _align_text(cache, timeout, dropout))


@given(st.one_of(st.integers(max_value=-1), st.integers(min_value=1025)), VALID_TIMEOUT)
def test_align_attr_cache_outside_bounds_fails_verification(cache: int, timeout: int):
    _assert_invalid(lambda: AlignAttr(cache, timeout), _align_text(cache, timeout),
                    f"#df.align cache {cache} is outside [0, 1024]")


@given(VALID_CACHE, st.one_of(st.integers(max_value=-2), st.just(0), st.integers(min_value=600_001)))
def test_align_attr_timeout_outside_bounds_fails_verification(cache: int, timeout: int):
    _assert_invalid(lambda: AlignAttr(cache, timeout), _align_text(cache, timeout),
                    f"#df.align timeout {timeout} must be -1 or in (0, 600000] ms")


@pytest.mark.parametrize("role", ["scatter", "gather"])
def test_balance_attr_roles_round_trip(role: str):
    _assert_attribute_round_trips(BalanceAttr(role), f"#df.balance<{role}>")


def test_balance_attr_unknown_role_fails_verification():
    with pytest.raises(VerifyException, match="^#df.balance role 'both' is neither scatter nor gather$"):
        BalanceAttr("both")


# --- place-nodes -----------------------------------------------------------------------------------

def _chain_graph(name: str, devices: Sequence[DeviceAttr | None]) -> GraphOp:
    """`in -> n0 -> n1 -> ... -> output`; node i gets `devices[i]` unless it is None."""
    data = DataOp("in", 0)
    ops: list[Operation] = [data]
    value = data.result
    for i, device in enumerate(devices):
        node = NodeOp(f"n{i}", "unary_pp", [value], 1, 1, {"device": device} if device else {})
        ops.append(node)
        value = node.outputs[0]
    return GraphOp(name, _body(*ops, OutputOp([value])))


def _placement_module() -> ModuleOp:
    return ModuleOp([_ports_pp("unary_pp", 1, 1),
                     _chain_graph("pinned", [DeviceAttr([1, 0, 3]), None, DeviceAttr(), None]),
                     _chain_graph("free", [None])])


def _devices(module: ModuleOp) -> dict[str, list[Attribute | None]]:
    return {g.sym_name.data: [n.attributes.get("device") for n in g.node_ops]
            for g in module.ops if isinstance(g, GraphOp)}


def test_place_nodes_keeps_existing_devices_and_places_the_others():
    module = _placement_module()
    place = PlaceNodes(default_device="0:0:1:0")
    place.apply(make_context(), module)
    module.verify()
    numa = DeviceAttr([0, 0, 1, 0])
    assert _devices(module) == {"pinned": [DeviceAttr([1, 0, 3]), numa, DeviceAttr(), numa], "free": [numa]}
    assert place.summary(module) == "placed 5 nodes (1 on host, 3 on 0:0:1:0, 1 on 1:0:3)"
    graph = next(g for g in module.ops if isinstance(g, GraphOp))
    assert "device" not in graph.data_ops[0].attributes and "device" not in graph.output_op.attributes


@pytest.mark.parametrize("spelling", ["host", "-1"])
def test_place_nodes_default_device_is_the_host(spelling: str):
    module = _placement_module()
    place = PlaceNodes(default_device=spelling)
    place.apply(make_context(), module)
    assert _devices(module)["free"] == [DeviceAttr()]
    assert place.summary(module) == "placed 5 nodes (4 on host, 1 on 1:0:3)"
    assert PlaceNodes() == PlaceNodes(default_device="host")


def test_place_nodes_summary_counts_only_placed_nodes():
    module = _placement_module()
    assert PlaceNodes().summary(module) == "placed 2 nodes (1 on host, 1 on 1:0:3)"
    assert PlaceNodes().summary(ModuleOp([_chain_graph("bare", [None, None])])) == "placed 0 nodes (none)"


def test_place_nodes_output_parses_back():
    module = _placement_module()
    PlaceNodes(default_device="0:1:2").apply(make_context(), module)
    assert "#df.device<0:1:2>" in _assert_round_trips(module)


def test_place_nodes_rejects_a_device_that_is_not_numbers():
    with pytest.raises(GeError) as caught:
        PlaceNodes(default_device="npu0").apply(make_context(), _placement_module())
    assert str(caught.value) == "device 'npu0' is not host, -1 or cluster:server:device[:numa]"
