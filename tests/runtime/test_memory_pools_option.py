"""GE's `ge.flowGraphMemMaxSize` bounds the runtime's tensor arena: the plan records the pools'
total (`shared_arena_bytes`), the loaded model's arena has that size, and a message that cannot
fit in it is refused with the sizes; several pools or request limits are warned of once."""
from __future__ import annotations

import json
import logging

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.core.errors import GeError
from dfir.frontend import options
from dfir.frontend.options import memory_pool_bytes
from dfir.om.plan import Plan
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om

ONE_ARENA = ("option ge.flowGraphMemMaxSize's division into pools (and their request limits) is accepted but "
             "has no effect in this version of dfir: the runtime's one tensor arena takes the pools' total; it "
             "serves requests of every size up to its whole size")


@df.pyflow
def add(a, b):
    return a + b


def _graph(pools: str | None) -> tuple[df.FlowGraph, df.FlowData, df.FlowData]:
    x, y = df.FlowData(name="x"), df.FlowData(name="y")
    graph_options = {} if pools is None else {"ge.flowGraphMemMaxSize": pools}
    return df.FlowGraph([add.fnode()(x, y)], graph_options), x, y


def _plan(compiled) -> Plan:
    return Plan.from_json(bytes(read_om(compiled.om).models[0].partition(PartitionType.FLOW_MODEL).data))


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(options, "_warned", set())
    df.finalize()
    yield
    df.finalize()


def test_the_plan_records_the_pools_total_and_only_when_set(caplog):
    with caplog.at_level(logging.WARNING, logger="dfir.options"):
        one = _plan(dfir.compile(_graph("1048576")[0]))
    assert one.shared_arena_bytes == 1048576 and caplog.messages == []
    assert one.to_json()["shared_arena_bytes"] == 1048576
    unset = _plan(dfir.compile(_graph(None)[0]))
    assert unset.shared_arena_bytes is None and "shared_arena_bytes" not in unset.to_json()


def test_several_pools_or_limits_add_up_with_one_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="dfir.options"):
        assert memory_pool_bytes({"ge.flowGraphMemMaxSize": "10737418240,2147483648:2097152"}) == 12884901888
        assert memory_pool_bytes({"ge.flowGraphMemMaxSize": "4096:2048"}) == 4096
        assert memory_pool_bytes({"ge.flowGraphMemMaxSize": "4096:0"}) == 4096
        assert memory_pool_bytes({}) is None
    assert caplog.messages == [ONE_ARENA]


def test_the_arena_has_the_size_asked_for_and_refuses_what_cannot_fit():
    graph, x, y = _graph("1048576")
    small = np.ones(2, np.int32)
    assert graph.feed_data({x: small, y: small}) == 0
    outputs, _, ret = graph.fetch_data(timeout=5000)
    assert ret == 0 and outputs[0].numpy().tolist() == [2, 2]
    big = np.ones(1 << 18, np.float32)  # 1 MiB: more than the arena holds with its block headers
    with pytest.raises(GeError) as caught:
        graph.feed_data({x: big, y: big})
    assert caught.value.error_message == ("a message body of 1048576 bytes does not fit in the tensor arena "
                                          "of 1048576 bytes")


def test_without_the_option_a_message_larger_than_the_pools_would_allow_fits():
    graph, x, y = _graph(None)
    big = np.ones(1 << 18, np.float32)
    assert graph.feed_data({x: big, y: big}) == 0
    outputs, _, ret = graph.fetch_data(timeout=5000)
    assert ret == 0 and outputs[0].numpy()[:2].tolist() == [2.0, 2.0]


@pytest.mark.parametrize("value, message", [
    (1023, "plan.shared_arena_bytes: 1023 is out of range [1024, 274877906944]"),
    (True, "plan.shared_arena_bytes: expected an integer, got true"),
])
def test_a_plan_with_a_bad_arena_size_is_refused(value, message):
    document = _plan(dfir.compile(_graph("1048576")[0])).to_json()
    document["shared_arena_bytes"] = value
    with pytest.raises(GeError) as caught:
        Plan.from_json(json.dumps(document))
    assert caught.value.error_message == message
