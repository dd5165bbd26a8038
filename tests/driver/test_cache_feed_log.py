"""With the compile cache on, the compile a FlowGraph's first feed runs says in the log (INFO,
logger `dfir.cache`) whether the cache had the model and how many subgraphs it reused."""
from __future__ import annotations

import logging
import re

import numpy as np
import pytest

import dfir.dataflow as df
from dfir.frontend.dataflow import session

KEY = "feedlog"


def _graph(offset: int) -> tuple[df.FlowGraph, df.FlowData]:
    @df.pyflow
    def shift(x):
        return x + offset

    @df.pyflow
    def double(x):
        return x * 2

    data = df.FlowData(name="x")
    return df.FlowGraph([double.fnode()(shift.fnode()(data))], name="chain"), data


def _first_feed_log(offset: int, cache_dir, caplog) -> list[str]:
    """The `dfir.cache` log lines of a fresh session's first feed (ge.runFlag=0: it only compiles)."""
    session.finalize()
    df.init({"ge.graph_compiler_cache_dir": str(cache_dir), "ge.graph_key": KEY, "ge.runFlag": "0"})
    graph, data = _graph(offset)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="dfir.cache"):
        assert graph.feed_data({data: np.ones(2, np.int32)}) == 0
    return [re.sub(r"feedlog_\d+\.om", "feedlog_<time>.om", record.getMessage())
            for record in caplog.records if record.name == "dfir.cache"]


@pytest.fixture(autouse=True)
def _fresh_session():
    yield
    session.finalize()


def test_the_first_feed_logs_miss_hit_and_the_subgraphs_reused(tmp_path, caplog):
    assert _first_feed_log(1, tmp_path, caplog) == [
        "compile cache: graph key feedlog: miss; stored feedlog_<time>.om; 0 of 2 subgraphs reused"]
    assert _first_feed_log(1, tmp_path, caplog) == [
        "compile cache: graph key feedlog: hit feedlog_<time>.om; 2 of 2 subgraphs reused"]
    assert _first_feed_log(5, tmp_path, caplog) == [  # `shift` changed: `double` is reused
        "compile cache: graph key feedlog: miss; stored feedlog_<time>.om; 1 of 2 subgraphs reused"]


def test_without_the_cache_the_first_feed_logs_nothing_of_it(tmp_path, caplog):
    session.finalize()
    df.init({"ge.runFlag": "0"})
    graph, data = _graph(1)
    with caplog.at_level(logging.INFO, logger="dfir.cache"):
        assert graph.feed_data({data: np.ones(2, np.int32)}) == 0
    assert [record for record in caplog.records if record.name == "dfir.cache"] == []
