"""Verification between phases costs each op a fixed number of checks, whatever the graph's size:
the whole module is verified first, then after each phase only the top-level ops it acts on."""
from collections import Counter

import pytest

import dfir
import dfir.dataflow as df
from dfir.dialects.df import FuncPpOp, GraphOp, NodeOp
from dfir.driver.pipeline import PHASES, verify_acted_on
from dfir.frontend.dataflow import names
from xdsl.utils.exceptions import VerifyException


@df.pyflow
def inc(x):
    return x + 1


def chain(size: int) -> df.FlowGraph:
    out = df.FlowData()
    for _ in range(size):
        out = inc.fnode()(out)
    return df.FlowGraph([out])


@pytest.fixture
def verified(monkeypatch) -> Counter:
    """Counts the `verify_` calls per op class during the test."""
    counts: Counter = Counter()
    for op_class in (NodeOp, FuncPpOp, GraphOp):
        original = op_class.verify_

        def counting(self, original=original, op_class=op_class):
            counts[op_class.__name__] += 1
            original(self)
        monkeypatch.setattr(op_class, "verify_", counting)
    return counts


@pytest.mark.parametrize("size", [5, 40])
def test_each_node_is_verified_three_times_at_any_size(verified, size):
    names.reset()
    dfir.compile(chain(size), stop_after="place")
    # before the phases, after `schedule` and after `place`: the phases that rewrite df.graph
    assert verified["NodeOp"] == 3 * size
    # the nodes share one process point: before the phases and after `fingerprint`
    assert verified["FuncPpOp"] == 2
    assert verified["GraphOp"] == 4


def phase(name: str):
    return next(p for p in PHASES if p.name == name)


def test_a_phase_verifies_what_it_acts_on():
    names.reset()
    module = dfir.compile(chain(2), stop_after="import").module
    graph = next(op for op in module.ops if isinstance(op, GraphOp))
    first, second = graph.node_ops
    second.properties["node_name"] = first.properties["node_name"]
    with pytest.raises(VerifyException, match="duplicate node name"):
        verify_acted_on(module, phase("schedule"))
    verify_acted_on(module, phase("shapes"))  # acts on ge.graph only: the df.graph is not read


def test_a_tops_only_phase_verifies_the_tops_not_what_they_hold(verified):
    names.reset()
    module = dfir.compile(chain(3), stop_after="import").module
    verified.clear()
    verify_acted_on(module, phase("fingerprint"))
    assert verified == Counter({"FuncPpOp": 1, "GraphOp": 1})
