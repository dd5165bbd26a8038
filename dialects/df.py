"""The `df` dialect: dataflow graphs of UDF and GE-graph nodes (the flow level of dfir).

A module holds process points (what a node runs) and graphs (how nodes are wired):

    df.func_pp @add_pp [#df.func<"add"(0, 1) -> (0)>] {kind = "py_func"} payload "gASV..."
    df.graph @pipeline {
      %0 = df.data "FlowData" index 0
      %1 = df.data "FlowData_1" index 1
      %2 = df.node "add_fnode"(%0, %1) pp @add_pp {loc = "add.py:9"} : 2 -> 1
      df.output %2
    }

Edges are SSA values of type `!df.flow` (a stream of messages). A graph body is a graph region:
its ops may appear in any order, and the verifier rejects cycles. A node replicated over several
devices is one `df.node` per instance (same name, `#df.instance<k of N>`), each output port of
the instances merged by a `df.gather`.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import ClassVar

import networkx as nx
from xdsl.dialects.builtin import (I64, ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr, SymbolRefAttr, UnitAttr,
                                   i64)
from xdsl.ir import Attribute, Block, Dialect, Operation, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (IRDLOperation, irdl_attr_definition, irdl_op_definition, lazy_traits_def, opt_attr_def,
                       opt_prop_def,
                       prop_def, region_def, result_def, traits_def, var_operand_def, var_result_def)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from dfir.core.udf_timeout import UDF_TIMEOUT_FACT, udf_timeout_problem
from dfir.dialects.df_attrs import (DF_ATTRIBUTES, AlignAttr, BalanceAttr, CountBatchAttr, DeviceAttr, FuncAttr,
                                    InstanceAttr, TimeBatchAttr)
from dfir.dialects.df_params import params_of


@irdl_attr_definition
class FlowType(ParametrizedAttribute, TypeAttribute):
    """`!df.flow`: an edge of a dataflow graph, carrying a stream of messages."""

    name = "df.flow"


FLOW = FlowType()
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def _parse_attrs_into(parser: Parser, op: Operation, property_names: Iterable[str]) -> None:
    """Parse an optional `{...}` dict; names in `property_names` become properties."""
    names = set(property_names)
    for key, value in parser.parse_optional_attr_dict().items():
        (op.properties if key in names else op.attributes)[key] = value


def _print_attrs(printer: Printer, op: Operation, property_names: Iterable[str]) -> None:
    merged = {k: v for k, v in op.properties.items() if k in set(property_names)}
    merged.update(op.attributes)
    printer.print_op_attributes(merged)


@irdl_op_definition
class DataOp(IRDLOperation):
    """A graph input (a FlowData): its name and its position among the graph's inputs.

        %0 = df.data "FlowData" index 0 {schema = tensor<1x2xi32>}
    """

    name = "df.data"

    data_name = prop_def(StringAttr)
    index = prop_def(IntegerAttr[I64])
    result = result_def(FlowType)
    traits = lazy_traits_def(lambda: (HasParent(GraphOp),))

    def __init__(self, data_name: str, index: int, attributes: dict[str, Attribute] | None = None):
        super().__init__(properties={"data_name": StringAttr(data_name), "index": IntegerAttr(index, i64)},
                         attributes=attributes or {}, result_types=[FLOW])

    @classmethod
    def parse(cls, parser: Parser) -> DataOp:
        name = parser.parse_str_literal()
        parser.parse_keyword("index")
        op = cls(name, parser.parse_integer())
        _parse_attrs_into(parser, op, ())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.data_name.data)
        printer.print_string(f" index {self.index.value.data}")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class NodeOp(IRDLOperation):
    """A flow node: runs process point `pp` on its inputs; `input_num -> output_num` ports.

        %2:2 = df.node "split"(%0) pp @split_pp {loc = "x.py:4"} : 1 -> 2

    The importer writes `loc`, `alias`, `user_attrs` (`set_attr`), `balance` and `resources`
    (`@pyflow(resources=...)`); the `place` phase writes `device` or `devices`, `invokes`
    (`place-nodes`: the devices of its invoked closures by key) and `udf_timeout_ms` (`place-nodes`:
    the timeout of a UDF node's calls its deploy info entry gives), `instance` and `dispatch`
    (`replicate-instances`) and `align` (`align-inputs`). Each is declared, so the verifier checks its type.
    """

    name = "df.node"

    node_name = prop_def(StringAttr)
    pp = prop_def(SymbolRefAttr)
    input_num = prop_def(IntegerAttr[I64])
    output_num = prop_def(IntegerAttr[I64])
    inputs = var_operand_def(FlowType)
    outputs = var_result_def(FlowType)
    loc = opt_attr_def(StringAttr)
    alias = opt_attr_def(StringAttr)
    user_attrs = opt_attr_def(DictionaryAttr)
    balance = opt_attr_def(BalanceAttr)
    resources = opt_attr_def(DictionaryAttr)
    device = opt_attr_def(DeviceAttr)
    devices = opt_attr_def(ArrayAttr[DeviceAttr])
    invokes = opt_attr_def(DictionaryAttr)
    udf_timeout_ms = opt_attr_def(IntegerAttr[I64])
    instance = opt_attr_def(InstanceAttr)
    dispatch = opt_attr_def(StringAttr)
    align = opt_attr_def(AlignAttr)
    batch = opt_attr_def(ArrayAttr[CountBatchAttr | TimeBatchAttr])
    traits = lazy_traits_def(lambda: (HasParent(GraphOp),))

    def __init__(self, node_name: str, pp: str, inputs: Sequence[SSAValue], input_num: int,
                 output_num: int, attributes: dict[str, Attribute] | None = None):
        super().__init__(
            operands=[list(inputs)],
            result_types=[[FLOW] * output_num],
            properties={"node_name": StringAttr(node_name), "pp": SymbolRefAttr(pp),
                        "input_num": IntegerAttr(input_num, i64), "output_num": IntegerAttr(output_num, i64)},
            attributes=attributes or {})

    @property
    def label(self) -> str:
        """How diagnostics name this node: its name and, when known, where it was created."""
        return f'node "{self.node_name.data}"' + (f" ({self.loc.data})" if self.loc is not None else "")

    @property
    def instance_devices(self) -> list[DeviceAttr]:
        """The devices of the node's instances, in instance order (one for an unreplicated node;
        none before `place-nodes`)."""
        if self.devices is not None:
            return list(self.devices.data)
        return [self.device] if self.device is not None else []

    def verify_(self) -> None:
        expected, got = self.input_num.value.data, len(self.inputs)
        if got != expected:
            raise VerifyException(f"{self.label}: expected {expected} inputs (input_num), got {got}")
        expected, got = self.output_num.value.data, len(self.outputs)
        if got != expected:
            raise VerifyException(f"{self.label}: expected {expected} outputs (output_num), got {got}")
        batched = [attr.input_index for attr in self.batch.data] if self.batch is not None else []
        for index in batched:
            if index >= len(self.inputs):
                raise VerifyException(f"{self.label}: batch on input {index}, but the node has "
                                      f"{len(self.inputs)} inputs")
        if batched != sorted(set(batched)):
            raise VerifyException(f"{self.label}: batch inputs {batched} must be distinct and in "
                                  "increasing order")
        problem = None if self.udf_timeout_ms is None else udf_timeout_problem(self.udf_timeout_ms.value.data)
        if problem:
            raise VerifyException(f"{self.label}: udf_timeout_ms {self.udf_timeout_ms.value.data}: {problem}")

    @classmethod
    def parse(cls, parser: Parser) -> NodeOp:
        name = parser.parse_str_literal()
        operands = parser.parse_comma_separated_list(parser.Delimiter.PAREN,
                                                     parser.parse_unresolved_operand)
        parser.parse_keyword("pp")
        pp = parser.parse_attribute()
        if not isinstance(pp, SymbolRefAttr):
            parser.raise_error(f"expected a process point symbol such as @add_pp, got {pp}")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        input_num = parser.parse_integer()
        parser.parse_punctuation("->")
        output_num = parser.parse_integer()
        values = parser.resolve_operands(operands, [FLOW] * len(operands), parser.pos)
        return cls(name, pp.root_reference.data, values, input_num, output_num, attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.node_name.data)
        printer.print_operands(self.inputs)
        printer.print_string(" pp ")
        printer.print_attribute(self.pp)
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" : {self.input_num.value.data} -> {self.output_num.value.data}")


@irdl_op_definition
class OutputOp(IRDLOperation):
    """The graph's outputs, in fetch order.

        df.output %2, %3#1
    """

    name = "df.output"

    outputs = var_operand_def(FlowType)
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(GraphOp)))

    def __init__(self, outputs: Sequence[SSAValue]):
        super().__init__(operands=[list(outputs)])

    @classmethod
    def parse(cls, parser: Parser) -> OutputOp:
        operands = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand) or []
        return cls(parser.resolve_operands(operands, [FLOW] * len(operands), parser.pos))

    def print(self, printer: Printer) -> None:
        if self.outputs:
            printer.print_string(" ")
            printer.print_list(self.outputs, printer.print_operand)


@irdl_op_definition
class GatherOp(IRDLOperation):
    """Merges one output port of the instances of a replicated node into one edge: every
    instance's messages flow on to the consumers (replicate-instances makes it).

        %a = df.node "a"(%0) pp @p {device = #df.device<0:0:0>, instance = #df.instance<0 of 2>} : 1 -> 1
        %b = df.node "a"(%0) pp @p {device = #df.device<0:0:1>, instance = #df.instance<1 of 2>} : 1 -> 1
        %g = df.gather %a, %b

    Its operands come from one port of the instances 0..N-1 of one node, in instance order.
    """

    name = "df.gather"

    inputs = var_operand_def(FlowType)
    result = result_def(FlowType)
    traits = lazy_traits_def(lambda: (HasParent(GraphOp),))

    def __init__(self, inputs: Sequence[SSAValue]):
        super().__init__(operands=[list(inputs)], result_types=[FLOW])

    def verify_(self) -> None:
        if len(self.inputs) < 2:
            raise VerifyException(f"df.gather merges the instances of a node and needs at least 2 "
                                  f"operands, got {len(self.inputs)}")
        first = self.inputs[0]
        if not isinstance(first.owner, NodeOp):
            raise VerifyException(f"df.gather operand 0 comes from {first.owner.name}, not a df.node")
        for k, value in enumerate(self.inputs):
            owner = value.owner
            instance = owner.instance if isinstance(owner, NodeOp) else None
            if not isinstance(owner, NodeOp) or owner.node_name != first.owner.node_name \
                    or value.index != first.index:
                raise VerifyException(f"df.gather operand {k} is not output {first.index} of an "
                                      f"instance of {first.owner.label}")
            if instance != InstanceAttr(k, len(self.inputs)):
                raise VerifyException(f"df.gather operand {k} must come from #df.instance<{k} of "
                                      f"{len(self.inputs)}> of {owner.label}, got "
                                      f"{instance if instance is not None else 'no instance'}")

    @classmethod
    def parse(cls, parser: Parser) -> GatherOp:
        operands = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        op = cls(parser.resolve_operands(operands, [FLOW] * len(operands), parser.pos))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_op_attributes(self.attributes)


def producer_nodes(value: SSAValue) -> list[NodeOp]:
    """The nodes whose messages flow on `value`: its owner, or the instances a df.gather merges."""
    owner = value.owner
    if isinstance(owner, NodeOp):
        return [owner]
    if isinstance(owner, GatherOp):
        return [v.owner for v in owner.inputs if isinstance(v.owner, NodeOp)]
    return []


@irdl_op_definition
class GraphOp(IRDLOperation):
    """A dataflow graph: inputs (`df.data`), nodes (`df.node`) and one `df.output`.

        df.graph @pipeline attributes {options = {"ge.graph_key" = "k"}} {
          %0 = df.data "FlowData" index 0
          %1 = df.node "relu"(%0) pp @relu_pp : 1 -> 1
          df.output %1
        }

    `align` is the graph's input alignment (`set_inputs_align_attrs`); `n_mapping` says that some
    node turns a number of inputs into another number of outputs (`set_contains_n_mapping_node`,
    or a batched input: the importer sets it then); `exception_catch` that UDFs may raise
    exceptions for other UDFs to catch (`set_exception_catch(True)`).
    """

    name = "df.graph"

    sym_name = prop_def(StringAttr)
    options = opt_prop_def(DictionaryAttr)
    align = opt_prop_def(AlignAttr)
    n_mapping = opt_prop_def(UnitAttr)
    exception_catch = opt_prop_def(UnitAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface())

    PROPERTY_NAMES: ClassVar[tuple[str, ...]] = ("options", "align", "n_mapping", "exception_catch")

    def __init__(self, sym_name: str, body: Region, options: dict[str, str] | None = None):
        props: dict[str, Attribute] = {"sym_name": StringAttr(sym_name)}
        if options:
            props["options"] = DictionaryAttr({k: StringAttr(v) for k, v in sorted(options.items())})
        super().__init__(properties=props, regions=[body])

    @property
    def data_ops(self) -> list[DataOp]:
        return [op for op in self.body.block.ops if isinstance(op, DataOp)]

    @property
    def node_ops(self) -> list[NodeOp]:
        return [op for op in self.body.block.ops if isinstance(op, NodeOp)]

    @property
    def output_op(self) -> OutputOp:
        last = self.body.block.last_op
        assert isinstance(last, OutputOp), "verified graphs end with df.output"
        return last

    @classmethod
    def parse(cls, parser: Parser) -> GraphOp:
        sym = parser.parse_symbol_name().data
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls(sym, parser.parse_region())
        for key, value in (attrs.data if attrs else {}).items():
            (op.properties if key in cls.PROPERTY_NAMES else op.attributes)[key] = value
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        merged = {k: v for k, v in self.properties.items() if k in self.PROPERTY_NAMES}
        printer.print_op_attributes({**merged, **self.attributes}, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body)

    def verify_(self) -> None:
        graph = f"df.graph @{self.sym_name.data}"
        _verify_inputs(graph, self.data_ops)
        nodes = self.node_ops
        _verify_unique_node_names(graph, nodes)
        _verify_process_points(nodes, _module_process_points(self))
        _verify_acyclic(graph, nodes)


def _verify_inputs(graph: str, datas: list[DataOp]) -> None:
    seen_names: set[str] = set()
    for data in datas:
        name = data.data_name.data
        if name in seen_names:
            raise VerifyException(f'{graph}: flow data "{name}" is defined twice')
        seen_names.add(name)
        if not data.result.uses:
            raise VerifyException(f'{graph}: flow data "{name}" is not used by any node or output')
    indexes = sorted(d.index.value.data for d in datas)
    if indexes != list(range(len(datas))):
        raise VerifyException(f"{graph}: flow data indexes {indexes} must be 0..{len(datas) - 1}, "
                              "each used once")


def _verify_unique_node_names(graph: str, nodes: list[NodeOp]) -> None:
    """Node names are unique, except that the instances of one replicated node share theirs:
    each carries a distinct `#df.instance` of the same count."""
    first: dict[str, NodeOp] = {}
    indexes: dict[str, set[int]] = {}
    for node in nodes:
        name = node.node_name.data
        ours = node.instance
        if name not in first:
            first[name] = node
            indexes[name] = {ours.index.data} if isinstance(ours, InstanceAttr) else set()
            continue
        theirs = first[name].instance
        if not (isinstance(ours, InstanceAttr) and isinstance(theirs, InstanceAttr)
                and ours.count == theirs.count and ours.index.data not in indexes[name]):
            raise VerifyException(f"{graph}: duplicate node name: {first[name].label} and {node.label}")
        indexes[name].add(ours.index.data)


def _module_process_points(op: Operation) -> dict[str, Operation]:
    """Process points of the module around `op`, by symbol (built once per graph check)."""
    module = op.parent_op()
    return {} if module is None else _module_process_points_of(module)


def _verify_process_points(nodes: list[NodeOp], pps: dict[str, Operation]) -> None:
    for node in nodes:
        sym = node.pp.root_reference.data
        pp = pps.get(sym)
        if pp is None:
            raise VerifyException(f"{node.label}: process point @{sym} does not exist")
        if isinstance(pp, FuncPpOp):
            pp.verify_ports(node)
        if isinstance(pp, FlowGraphPpOp):
            pp.verify_node(node)


def _verify_acyclic(graph: str, nodes: list[NodeOp]) -> None:
    position = {node: i for i, node in enumerate(nodes)}
    forward = any(position.get(p, -1) >= position[n] for n in nodes for v in n.inputs
                  for p in producer_nodes(v))
    if not forward:
        return  # every producer precedes its consumers: no cycle is possible
    edges = nx.DiGraph()
    for node in nodes:
        for value in node.inputs:
            for producer in producer_nodes(value):
                edges.add_edge(producer.node_name.data, node.node_name.data)
    try:
        cycle = nx.find_cycle(edges)
    except nx.NetworkXNoCycle:
        return
    path = " -> ".join([u for u, _ in cycle] + [cycle[0][0]])
    raise VerifyException(f"{graph}: the graph has a cycle: {path}")


@irdl_op_definition
class InvokedClosureOp(IRDLOperation):
    """A model a UDF may invoke by key (`run_flow_model`): `graph_key` names process point `pp`.

        df.invoked_closure "invoke_graph" @mlp_pp
    """

    name = "df.invoked_closure"

    key = prop_def(StringAttr)
    pp = prop_def(SymbolRefAttr)
    traits = lazy_traits_def(lambda: (HasParent(FuncPpOp),))
    assembly_format = "$key $pp attr-dict"

    def __init__(self, key: str, pp: str):
        super().__init__(properties={"key": StringAttr(key), "pp": SymbolRefAttr(pp)})


@irdl_op_definition
class FuncPpOp(IRDLOperation):
    """A function process point: a UDF and its entry points (`funcs`), plus invoked closures.

    `kind` says what the UDF is and what `payload` (base64) holds: `py_func`, a `@pyflow` function
    or class, cloudpickled; `py_project`, a UDF project's Python sources (tar.gz) with `project =
    {py_module, py_class}`; `cpp_project`, a UDF project's C++ library with `project =
    {target_bin, resource_type}`. Projects name their `compile_config`. `init_params` holds typed
    values (`dfir.dialects.df_params`). Each `#df.func` names an entry point and the node ports it owns.

        df.func_pp @add_pp [#df.func<"add"(0, 1) -> (0)>] {kind = "py_func"} payload "gASV..."
        df.func_pp @Add_pp [#df.func<"Add1"(0, 1) -> (0)>] {kind = "py_project",
            init_params = {out_type = #df.dtype<DT_INT32>}, compile_config = "add_func.json",
            project = {py_class = "Add", py_module = "func_add"}} payload "H4sI..."
    """

    name = "df.func_pp"

    sym_name = prop_def(StringAttr)
    funcs = prop_def(ArrayAttr[FuncAttr])
    kind = prop_def(StringAttr)
    payload = opt_prop_def(StringAttr)
    init_params = opt_prop_def(DictionaryAttr)
    compile_config = opt_prop_def(StringAttr)
    project = opt_prop_def(DictionaryAttr)
    closures = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), NoTerminator())

    PROPERTY_NAMES: ClassVar[tuple[str, ...]] = ("kind", "payload", "init_params", "compile_config",
                                                 "project")
    # What `project` must give for each kind (and the values it may take, when they are few).
    KINDS: ClassVar[dict[str, dict[str, tuple[str, ...]]]] = {
        "py_func": {},
        "py_project": {"py_module": (), "py_class": ()},
        "cpp_project": {"target_bin": (), "resource_type": ("X86", "Aarch", "Ascend")},
    }

    def __init__(self, sym_name: str, kind: str, funcs: Sequence[FuncAttr],
                 payload: str | None = None, closures: Sequence[InvokedClosureOp] = ()):
        props: dict[str, Attribute] = {"sym_name": StringAttr(sym_name), "kind": StringAttr(kind),
                                       "funcs": ArrayAttr(list(funcs))}
        if payload is not None:
            props["payload"] = StringAttr(payload)
        region = Region()
        region.add_block(Block(list(closures)))
        super().__init__(properties=props, regions=[region])

    def verify_(self) -> None:
        where = f"df.func_pp @{self.sym_name.data}"
        if self.payload is not None and not _BASE64.fullmatch(self.payload.data):
            raise VerifyException(f"{where}: payload is not base64 text")
        kind = self.kind.data
        if kind not in self.KINDS:
            raise VerifyException(f"{where}: kind \"{kind}\" is not one of {list(self.KINDS)}")
        if self.init_params is not None:
            try:
                params_of(self.init_params)
            except ValueError as error:
                raise VerifyException(f"{where}: {error}") from None
        if kind != "py_func":
            self._verify_project(where, kind)

    def _verify_project(self, where: str, kind: str) -> None:
        """A UDF project ships a payload, names its compile config and gives its `project` facts."""
        for name in ("payload", "compile_config", "project"):
            if getattr(self, name) is None:
                raise VerifyException(f"{where}: a {kind} needs a {name}")
        facts = self.project.data
        for key, allowed in self.KINDS[kind].items():
            value = facts.get(key)
            if not isinstance(value, StringAttr) or (allowed and value.data not in allowed):
                expected = f"one of {list(allowed)}" if allowed else "a string"
                raise VerifyException(f"{where}: project.{key} must be {expected}, got "
                                      f"{value if value is not None else 'nothing'}")
        timeout = facts.get(UDF_TIMEOUT_FACT)
        if timeout is not None:
            digits = isinstance(timeout, StringAttr) and timeout.data.isascii() and timeout.data.isdigit()
            problem = udf_timeout_problem(int(timeout.data) if digits else 0)  # not digits: out of range as 0
            if problem:
                raise VerifyException(f"{where}: project.{UDF_TIMEOUT_FACT} {timeout}: {problem}, as a string")

    def verify_ports(self, node: NodeOp) -> None:
        """Each node input and output is owned by exactly one func of this process point."""
        for kind, count, ports in (("input", node.input_num.value.data, "input_ports"),
                                   ("output", node.output_num.value.data, "output_ports")):
            owned = sorted(p for f in self.funcs for p in getattr(f, ports))
            if owned != list(range(count)):
                raise VerifyException(
                    f"{node.label}: the funcs of @{self.sym_name.data} own {kind} ports {owned}, "
                    f"expected each of 0..{count - 1} exactly once")

    @classmethod
    def parse(cls, parser: Parser) -> FuncPpOp:
        sym = parser.parse_symbol_name().data
        funcs = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_attribute)
        op = cls(sym, "", funcs)
        _parse_attrs_into(parser, op, cls.PROPERTY_NAMES)
        if parser.parse_optional_keyword("payload") is not None:
            op.properties["payload"] = StringAttr(parser.parse_str_literal())
        region = parser.parse_optional_region()
        if region is not None and region.blocks:
            for closure in list(region.block.ops):
                closure.detach()
                op.closures.block.add_op(closure)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" [")
        printer.print_list(self.funcs, printer.print_attribute)
        printer.print_string("]")
        _print_attrs(printer, self, [n for n in self.PROPERTY_NAMES if n != "payload"])
        if self.payload is not None:
            # base64 needs no escaping; printing it whole avoids xDSL's per-character escaping.
            printer.print_string(f' payload "{self.payload.data}"')
        if self.closures.block.ops:
            printer.print_string(" ")
            printer.print_region(self.closures)


@irdl_op_definition
class GraphPpOp(IRDLOperation):
    """A graph process point: runs the GE graph `graph` (a `ge.graph` symbol).

        df.graph_pp @mlp_pp graph @mlp {framework = "ge"}
    """

    name = "df.graph_pp"

    sym_name = prop_def(StringAttr)
    graph = prop_def(SymbolRefAttr)
    framework = prop_def(StringAttr)
    compile_config = opt_prop_def(StringAttr)
    traits = traits_def(SymbolOpInterface())

    PROPERTY_NAMES: ClassVar[tuple[str, ...]] = ("framework", "compile_config")

    def __init__(self, sym_name: str, graph: str, framework: str = "ge"):
        super().__init__(properties={"sym_name": StringAttr(sym_name), "graph": SymbolRefAttr(graph),
                                     "framework": StringAttr(framework)})

    def verify_(self) -> None:
        module = self.parent_op()
        if module is None:
            return
        sym = self.graph.root_reference.data
        if not any(getattr(op, "sym_name", None) == StringAttr(sym) and op.name == "ge.graph"
                   for op in module.regions[0].block.ops):
            raise VerifyException(f"df.graph_pp @{self.sym_name.data}: GE graph @{sym} does not exist")

    @classmethod
    def parse(cls, parser: Parser) -> GraphPpOp:
        return _parse_graph_point(cls, parser, "a GE graph symbol such as @mlp")

    def print(self, printer: Printer) -> None:
        _print_graph_point(self, printer)


@irdl_op_definition
class FlowGraphPpOp(IRDLOperation):
    """A FlowGraph process point: runs the sub-FlowGraph `graph` (a `df.graph` symbol), for a node
    (its inputs are the graph's `df.data` by index, its outputs the graph's `df.output`) or an
    invoked closure (`run_flow_model` feeds and fetches the same ports). `point_name` is the
    FlowGraphProcessPoint's name, the `invoke_name` a deploy file places a node's sub-graph by.

        df.flow_graph_pp @sub_pp graph @sub {point_name = "sub"}
    """

    name = "df.flow_graph_pp"

    sym_name = prop_def(StringAttr)
    graph = prop_def(SymbolRefAttr)
    point_name = opt_prop_def(StringAttr)
    traits = traits_def(SymbolOpInterface())

    PROPERTY_NAMES: ClassVar[tuple[str, ...]] = ("point_name",)

    def __init__(self, sym_name: str, graph: str, point_name: str | None = None):
        props: dict[str, Attribute] = {"sym_name": StringAttr(sym_name), "graph": SymbolRefAttr(graph)}
        if point_name is not None:
            props["point_name"] = StringAttr(point_name)
        super().__init__(properties=props)

    @property
    def label(self) -> str:
        return f"df.flow_graph_pp @{self.sym_name.data}"

    def target(self) -> GraphOp | None:
        """The `df.graph` this point runs, when the module has it."""
        module = self.parent_op()
        sym = self.graph.root_reference.data
        return next((op for op in (module.regions[0].block.ops if module is not None else ())
                     if isinstance(op, GraphOp) and op.sym_name.data == sym), None)

    def verify_(self) -> None:
        if self.parent_op() is None:
            return
        if self.target() is None:
            raise VerifyException(f"{self.label}: sub-FlowGraph @{self.graph.root_reference.data} does not exist")
        chain = [self.sym_name.data]
        pending = [(self, chain)]
        while pending:
            point, path = pending.pop()
            for inner in _points_run_by(point.target()):
                if inner.sym_name.data == self.sym_name.data:
                    cycle = " -> ".join(f"@{s}" for s in (*path, self.sym_name.data))
                    raise VerifyException(f"{self.label}: sub-FlowGraphs form a cycle: {cycle}")
                if inner.sym_name.data not in path and inner.target() is not None:
                    pending.append((inner, [*path, inner.sym_name.data]))

    def verify_node(self, node: NodeOp) -> None:
        """A node running this point has the sub-FlowGraph's inputs and outputs."""
        graph = self.target()
        if graph is None:
            return
        inputs, outputs = len(graph.data_ops), len(graph.output_op.outputs)
        if (node.input_num.value.data, node.output_num.value.data) != (inputs, outputs):
            raise VerifyException(f"{node.label}: expected {inputs} inputs and {outputs} outputs "
                                  f"(sub-FlowGraph @{graph.sym_name.data}), got "
                                  f"{node.input_num.value.data} -> {node.output_num.value.data}")

    @classmethod
    def parse(cls, parser: Parser) -> FlowGraphPpOp:
        return _parse_graph_point(cls, parser, "a df.graph symbol such as @sub")

    def print(self, printer: Printer) -> None:
        _print_graph_point(self, printer)


def _parse_graph_point(cls, parser: Parser, expected: str):
    """`@sym graph @target {attrs}`: a `df.graph_pp` or `df.flow_graph_pp`."""
    sym = parser.parse_symbol_name().data
    parser.parse_keyword("graph")
    graph = parser.parse_attribute()
    if not isinstance(graph, SymbolRefAttr):
        parser.raise_error(f"expected {expected}, got {graph}")
    op = cls(sym, graph.root_reference.data)
    _parse_attrs_into(parser, op, cls.PROPERTY_NAMES)
    return op


def _print_graph_point(op, printer: Printer) -> None:
    printer.print_string(" ")
    printer.print_symbol_name(op.sym_name.data)
    printer.print_string(" graph ")
    printer.print_attribute(op.graph)
    _print_attrs(printer, op, op.PROPERTY_NAMES)


def _points_run_by(graph: GraphOp) -> list[FlowGraphPpOp]:
    """The FlowGraph points the nodes of `graph` run or invoke as closures."""
    pps = _module_process_points(graph)
    found = []
    for node in graph.node_ops:
        pp = pps.get(node.pp.root_reference.data)
        symbols = [c.pp.root_reference.data for c in pp.closures.block.ops] if isinstance(pp, FuncPpOp) else []
        for target in (pp, *(pps.get(s) for s in symbols)):
            if isinstance(target, FlowGraphPpOp):
                found.append(target)
    return found


def subgraph_parents(module: Operation) -> dict[str, tuple[NodeOp, str | None]]:
    """Each sub-FlowGraph's symbol -> the node that runs it and the closure key it is invoked by
    (None: the node's own process point)."""
    pps = _module_process_points_of(module)
    parents: dict[str, tuple[NodeOp, str | None]] = {}
    for graph in (op for op in module.regions[0].block.ops if isinstance(op, GraphOp)):
        for node in graph.node_ops:
            pp = pps.get(node.pp.root_reference.data)
            uses = [(pp, None)]
            if isinstance(pp, FuncPpOp):
                uses += [(pps.get(c.pp.root_reference.data), c.key.data) for c in pp.closures.block.ops]
            for target, key in uses:
                if isinstance(target, FlowGraphPpOp):
                    parents[target.graph.root_reference.data] = (node, key)
    return parents


def top_graphs(module: Operation) -> list[GraphOp]:
    """The `df.graph`s of the module that no `df.flow_graph_pp` runs."""
    subs = {op.graph.root_reference.data for op in module.regions[0].block.ops if isinstance(op, FlowGraphPpOp)}
    return [op for op in module.regions[0].block.ops if isinstance(op, GraphOp) and op.sym_name.data not in subs]


def _module_process_points_of(module: Operation) -> dict[str, Operation]:
    return {pp.sym_name.data: pp for pp in module.regions[0].block.ops
            if isinstance(pp, FuncPpOp | GraphPpOp | FlowGraphPpOp)}


DF = Dialect("df", [GraphOp, DataOp, NodeOp, OutputOp, GatherOp, FuncPpOp, GraphPpOp, FlowGraphPpOp,
                    InvokedClosureOp],
             [FlowType, *DF_ATTRIBUTES])
