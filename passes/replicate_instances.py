"""`replicate-instances`: turn each node placed on several devices into one node per instance.

Reads: each node's `devices` (written by place-nodes: one device per instance, in instance
order) and the `balance` role of the nodes feeding it. Writes, in place of a node with N >= 2
devices, N `df.node` clones with the same name, process point, inputs and attributes, each with
`device = #df.device<d_k>`, `instance = #df.instance<k of N>` and `dispatch`: `"route_label"`
when a producer of its inputs scatters or gathers (`balance`), so that messages go to the
instance their route label names, else `"round_robin"` (by transaction id). One `df.gather` per
output port merges the clones' results and replaces every use of the node's result. A node with
one device in `devices` just gets it as `device`.

    %1 = df.node "a"(%0) pp @p {devices = [#df.device<0:0:0>, #df.device<0:0:1>]} : 1 -> 1
    df.output %1
  ==>
    %1 = df.node "a"(%0) pp @p {device = #df.device<0:0:0>, instance = #df.instance<0 of 2>,
                                dispatch = "round_robin"} : 1 -> 1
    %2 = df.node "a"(%0) pp @p {device = #df.device<0:0:1>, instance = #df.instance<1 of 2>,
                                dispatch = "round_robin"} : 1 -> 1
    %3 = df.gather %1, %2
    df.output %3

This is the one place instances are made. Lowering writes each clone as it is, one entry of the
plan's `units` (`{"node": 0, "instance": 1, "device": "0:0:1"}` for `%2` above: its plan node,
instance index and device), and reads through each `df.gather` to the plan node, whose every
unit feeds the gather's consumers; the runtime runs the units it finds (docs/execution-plan.md).

The summary says how many nodes became how many instances.
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from dfir.dialects.df import GatherOp, GraphOp, NodeOp, producer_nodes
from dfir.dialects.df_attrs import InstanceAttr


def dispatch_rule(node: NodeOp) -> str:
    """`route_label` when a producer of `node`'s inputs has a balance role, else `round_robin`."""
    balanced = any(producer.balance is not None
                   for value in node.inputs for producer in producer_nodes(value))
    return "route_label" if balanced else "round_robin"


def replicate(node: NodeOp) -> list[NodeOp]:
    """Replace `node` (with N >= 2 `devices`) by its N instances and one df.gather per output."""
    devices = node.devices.data
    dispatch = StringAttr(dispatch_rule(node))
    shared = {key: value for key, value in node.attributes.items() if key != "devices"}
    clones = []
    for k, device in enumerate(devices):
        attributes = {**shared, "device": device, "instance": InstanceAttr(k, len(devices)),
                      "dispatch": dispatch}
        clone = NodeOp(node.node_name.data, node.pp.root_reference.data, node.inputs,
                       node.input_num.value.data, node.output_num.value.data, attributes)
        Rewriter.insert_op(clone, InsertPoint.before(node))
        clones.append(clone)
    for port, result in enumerate(node.outputs):
        gather = GatherOp([clone.outputs[port] for clone in clones])
        Rewriter.insert_op(gather, InsertPoint.before(node))
        result.replace_all_uses_with(gather.result)
    Rewriter.erase_op(node)
    return clones


@dataclass(frozen=True)
class ReplicateInstances(ModulePass):
    name = "replicate-instances"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in [g for g in op.walk() if isinstance(g, GraphOp)]:
            for node in graph.node_ops:
                if node.devices is None:
                    continue
                if not node.devices.data:
                    raise DiagnosticException(f"{node.label}: `devices` lists no device")
                if len(node.devices) >= 2:
                    replicate(node)
                else:
                    node.device, node.devices = node.devices.data[0], None

    def summary(self, op: ModuleOp) -> str:
        instances = [n.instance for n in op.walk() if isinstance(n, NodeOp) and n.instance is not None]
        if not instances:
            return "no node has several devices"
        replicated = sum(1 for instance in instances if instance.index.data == 0)
        return f"replicated {replicated} node{'s' if replicated != 1 else ''} into {len(instances)} instances"
