"""The units of work a worker runs: a node's funcs (`FuncSpec`), where their inputs come from
(`Source`) and the checks a wiring must pass before anything runs.

A node (`NodeSpec`) has one or more funcs; each consumes some of the node's inputs and produces
some of its outputs. A plain func receives one `Message` per input and returns the output sets
to emit; a stream-input func receives one `InputStream` per input and reads them as it likes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Protocol, Sequence

from dfir.core.errors import GeError
from dfir.core.messages import Message

OutputSet = list[tuple[int, Message]]  # (node output port, message) pairs emitted together


class Cancelled(BaseException):
    """Raised in workers, and in UDFs blocked on a channel read, when the scheduler closes.

    A BaseException (like `asyncio.CancelledError`) so that a UDF's `except Exception` cannot
    swallow the shutdown.
    """


class SchedulerClosed(GeError):
    """A frontend call (`submit`, `fetch`) on a closed scheduler, or one closed while it waited."""


@dataclass(frozen=True)
class Source:
    """Where a channel's messages come from: graph input `index` (`node` None), input `index` of
    flow closure `closure` (`node` None), or a node's port."""

    node: int | None
    index: int
    closure: int | None = None


@dataclass(frozen=True)
class FuncSpec:
    """One entry point of a node: the node inputs it consumes and the node outputs it produces.

    `run` receives one `Message` per input (a plain func, never an error message) or one
    `InputStream` per input (`stream_input`), and returns the output sets to emit, in order.
    """

    name: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    stream_input: bool
    run: Callable[[list], Iterable[OutputSet]]


@dataclass(frozen=True)
class NodeSpec:
    name: str
    sources: tuple[Source, ...]  # one per node input
    num_outputs: int
    funcs: tuple[FuncSpec, ...]


class InputStream(Protocol):
    """One input channel as a stream-input func reads it (see `dfir.frontend.flow_func.FlowMsgQueue`)."""

    def take(self, block: bool = True, timeout: float | None = None) -> Message:
        """The next message; `queue.Empty` when none comes in time; `Cancelled` once closed."""

    def pending(self) -> int:
        """How many messages wait in the channel."""


def check_outputs(nodes: Sequence[NodeSpec], num_inputs: int, outputs: Sequence[Source]) -> None:
    """GeError unless every graph output comes from a graph input or node output that exists."""
    for i, source in enumerate(outputs):
        _check_source(nodes, num_inputs, source, f"graph output {i}")


def check_sources(nodes: Sequence[NodeSpec], num_inputs: int, node: NodeSpec) -> None:
    """GeError unless every input of `node` comes from a graph input or node output that exists."""
    for j, source in enumerate(node.sources):
        _check_source(nodes, num_inputs, source, f"node '{node.name}' input {j}")


def check_funcs(node: NodeSpec) -> None:
    """GeError unless each func of `node` uses ports it has and each input has exactly one func."""
    for func in node.funcs:
        if not func.inputs:
            raise GeError(f"node '{node.name}' func '{func.name}' has no inputs; "
                          f"a func needs at least one")
        _check_ports(node, func, "reads inputs", func.inputs, len(node.sources))
        _check_ports(node, func, "writes outputs", func.outputs, node.num_outputs)
    for j in range(len(node.sources)):
        consumers = [func.name for func in node.funcs if j in func.inputs]
        if len(consumers) != 1:
            raise GeError(f"node '{node.name}' input {j} is consumed by funcs {consumers}; "
                          f"expected exactly one")


def _check_ports(node: NodeSpec, func: FuncSpec, verb: str, ports: tuple[int, ...], count: int) -> None:
    if any(not 0 <= port < count for port in ports):
        raise GeError(f"node '{node.name}' func '{func.name}' {verb} {list(ports)} but the node "
                      f"has {count}")


def _check_source(nodes: Sequence[NodeSpec], num_inputs: int, source: Source, where: str) -> None:
    if source.node is None:
        if not 0 <= source.index < num_inputs:
            raise GeError(f"{where} comes from graph input {source.index}, but the graph has "
                          f"{num_inputs} inputs")
    elif not 0 <= source.node < len(nodes):
        raise GeError(f"{where} comes from node {source.node}, but the graph has {len(nodes)} nodes")
    elif not 0 <= source.index < nodes[source.node].num_outputs:
        producer = nodes[source.node]
        raise GeError(f"{where} comes from output {source.index} of node '{producer.name}', "
                      f"which has {producer.num_outputs} outputs")
