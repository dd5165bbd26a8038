"""Lowering writes the instances `replicate-instances` made as the plan's `units`: one per
`df.node` clone, with its instance index and device as the pass wrote them, and reads through each
`df.gather` to the plan node whose units it merges (docs/execution-plan.md)."""
from __future__ import annotations

from xdsl.parser import Parser

from dfir.driver.job import make_context
from dfir.lowering.plan import graph_skeleton, read_skeleton, the_graph
from dfir.om.plan import DataRef, NodeRef
from dfir.passes.replicate_instances import ReplicateInstances

IR = """
df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @g {
  %in = df.data "in" index 0
  %first = df.node "first"(%in) pp @unary_pp {device = #df.device<host>} : 1 -> 1
  %work = df.node "work"(%first) pp @unary_pp {devices = [#df.device<0:0:1>, #df.device<0:0:0>, #df.device<0:0:1>]} : 1 -> 1
  %last = df.node "last"(%work) pp @unary_pp {device = #df.device<0:0:-1:0>} : 1 -> 1
  df.output %last, %work
}
"""


def replicated():
    module = Parser(make_context(), IR).parse_module()
    ReplicateInstances().apply(make_context(), module)
    module.verify()
    return the_graph(module)


def test_each_clone_is_one_unit_of_its_plan_node():
    graph = replicated()
    skeleton = graph_skeleton(graph)
    assert [node.name for node in skeleton.nodes] == ["first", "work", "last"]
    assert [(u.node, u.instance, u.device) for u in skeleton.units] == [
        (0, 0, "-1"), (1, 0, "0:0:1"), (1, 1, "0:0:0"), (1, 2, "0:0:1"), (2, 0, "0:0:-1:0")]
    clones = [node for node in graph.node_ops if node.node_name.data == "work"]
    assert [(c.instance.index.data, c.attributes["device"].spelling()) for c in clones] == [
        (u.instance, u.device) for u in skeleton.units[1:4]]
    assert [u.device for u in skeleton.units_of(1)] == ["0:0:1", "0:0:0", "0:0:1"]
    skeleton.check()


def test_a_gather_reads_as_the_node_whose_units_it_merges():
    skeleton = graph_skeleton(replicated())
    assert [node.inputs for node in skeleton.nodes] == [(DataRef(0),), (NodeRef(0, 0),), (NodeRef(1, 0),)]
    assert skeleton.outputs == (NodeRef(2, 0), NodeRef(1, 0))
    assert skeleton.nodes[1].dispatch == "round_robin"


def test_the_skeleton_round_trips_with_its_units():
    skeleton = graph_skeleton(replicated())
    document = skeleton.to_json()
    assert document["format"] == 2 and len(document["units"]) == 5
    assert read_skeleton(document) == skeleton
