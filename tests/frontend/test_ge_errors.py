"""GE's error model: DfException / DfAbortException, GE's return codes from feed and fetch (the
reason logged and kept on the RetCode), a UDF raising GE's exceptions, and exception catch."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
import dfir.flow_func as ff
from dfir.core import errors
from dfir.ge.error import GeError
from dfir.runtime.driver.status import ABORT_MARK

WAIT_MS = 5000


def int32(*values):
    return np.array(values, dtype=np.int32)


# -- the exceptions ---------------------------------------------------------------------------

def test_df_exceptions_carry_ges_code_and_message_and_print_as_ge_prints_them():
    error = df.DfException("bad input")
    assert (error.error_code, error.message, str(error), repr(error)) == (
        145000, "bad input", "DfException:145000:bad input", "DfException:145000:bad input")
    abort = df.DfAbortException("stop", 42)
    assert (abort.error_code, abort.message, str(abort)) == (42, "stop", "DfException:42:stop")
    assert isinstance(abort, df.DfException) and isinstance(error, GeError) and isinstance(error, RuntimeError)
    assert df.utils.DfException is df.DfException and df.utils.DfAbortException is df.DfAbortException


def test_ges_return_codes_have_ges_values():
    assert (errors.PARAM_INVALID, errors.NOT_INIT, errors.SHAPE_INVALID, errors.DATATYPE_INVALID,
            errors.SUBHEALTHY, errors.INNER_ERROR, errors.FAILED) == (
        145000, 145001, 145021, 145022, 345102, 545000, 0xFFFFFFFF)


# -- what the FlowGraph raises -----------------------------------------------------------------

@df.pyflow
def inc(x):
    return x + 1


@pytest.mark.parametrize("call, message", [
    (lambda g: g.set_inputs_align_attrs(1025, 100), "align_max_cache_num=1025 is out of range [0, 1024]"),
    (lambda g: g.set_inputs_align_attrs(10, 0), "align_timeout=0 must be -1 or in (0, 600000] ms"),
    (lambda g: df.FlowGraph("not outputs"), "FlowGraph outputs must be a list of FlowOutput"),
])
def test_the_flow_graph_raises_df_exception_as_ge_does(call, message):
    graph = df.FlowGraph([inc.fnode()(df.FlowData())])
    with pytest.raises(df.DfException) as caught:
        call(graph)
    assert (caught.value.error_code, caught.value.message) == (145000, message)


def test_settings_after_the_first_feed_raise_df_exception():
    x = df.FlowData()
    graph = df.FlowGraph([inc.fnode()(x)], name="late")
    assert graph.feed_data({x: int32(1)}) == 0
    for call, name in ((lambda: graph.set_exception_catch(True), "set_exception_catch"),
                       (lambda: graph.set_inputs_align_attrs(1, 100), "set_inputs_align_attrs"),
                       (lambda: graph.set_contains_n_mapping_node(True), "set_contains_n_mapping_node")):
        with pytest.raises(df.DfException) as caught:
            call()
        assert caught.value.message == f"FlowGraph late: {name} must be called before the first feed"
    assert graph.fetch_data(timeout=WAIT_MS)[2] == 0


def test_exception_catch_without_alignment_is_refused_at_the_first_feed():
    x = df.FlowData()
    graph = df.FlowGraph([inc.fnode()(x)], name="catching")
    graph.set_exception_catch(True)
    with pytest.raises(df.DfException) as caught:
        graph.feed_data({x: int32(1)})
    assert caught.value.message == ("FlowGraph catching: exception catch is enabled while input alignment is off; "
                                    "call set_inputs_align_attrs with align_max_cache_num > 0 as well")


def test_fetch_before_any_feed_raises_df_exception():
    graph = df.FlowGraph([inc.fnode()(df.FlowData())], name="unfed")
    with pytest.raises(df.DfException, match=r"FlowGraph unfed has no loaded model: feed data first"):
        graph.fetch_data(timeout=0)


# -- feed_data / fetch_data return GE's codes --------------------------------------------------

@pytest.fixture
def typed_graph():
    """A FlowGraph of inputs a (int32 [2]) and b, adding them."""
    a = df.FlowData(df.Tensor, df.TensorDesc(df.DT_INT32, [2]), name="a")
    b = df.FlowData(name="b")

    @df.pyflow
    def add(p, q):
        return p + q
    graph = df.FlowGraph([add.fnode()(a, b)], name="typed")
    assert graph.feed_data({a: int32(1, 2), b: int32(3, 4)}) == 0  # loads it
    assert graph.fetch_data(timeout=WAIT_MS)[0][0].numpy().tolist() == [4, 6]
    yield graph, a, b
    graph._model.close()


@pytest.mark.parametrize("feed, args, code, reason", [
    (lambda a, b: {a: int32(1, 2)}, {}, 145000, "feed is missing input 'b'; expected inputs ['a', 'b']"),
    (lambda a, b: {a: int32(1, 2, 3), b: int32(1)}, {}, 145021, "input 'a' expects shape [2], got [3]"),
    (lambda a, b: {a: int32(1, 2), b: {"k": 1}}, {}, 145022,
     "input 'b' got a dict, not a tensor; feed() carries Python objects"),
    (lambda a, b: {a: ["x", "y"], b: int32(1)}, {}, 145022,
     "input 'a' cannot be a DT_INT32 tensor: invalid literal for int() with base 10: 'x'"),
    (lambda a, b: {a: int32(1, 2), b: int32(1)}, {"flow_info": 7}, 145000, "flow_info must be a FlowInfo, got int"),
    (lambda a, b: {}, {}, 145000, "feed is empty; only feed_data with DATA_FLOW_FLAG_EOS set in flow_info may feed "
                                  "nothing"),
    (lambda a, b: {a: int32(1, 2), b: int32(1)}, {"timeout": -5}, 145000,
     "timeout must be -1 (wait forever) or a number of milliseconds >= 0, got -5"),
])
def test_feed_data_returns_ges_code_and_logs_dfirs_reason(typed_graph, feed, args, code, reason, caplog):
    graph, a, b = typed_graph
    with caplog.at_level(logging.ERROR, logger="dfir.runtime"):
        ret = graph.feed_data(feed(a, b), **args)
    assert (ret, ret.message) == (code, reason)
    assert caplog.messages == [f"feed_data failed; model=typed; {reason}"]


def test_fetch_data_of_a_bad_index_returns_param_invalid(typed_graph, caplog):
    graph = typed_graph[0]
    tensors, info, ret = graph.fetch_data([3], timeout=0)
    reason = "output index 3 is out of range; the model has 1 outputs"
    assert (tensors, info.transaction_id, ret, ret.message) == ([], 0, 145000, reason)
    assert caplog.messages == [f"fetch_data failed; model=typed; {reason}"]


def test_feed_of_a_missing_input_returns_param_invalid(typed_graph):
    graph, a, _ = typed_graph
    ret = graph.feed({a: int32(1, 2)})
    assert (ret, ret.message) == (145000, "feed is missing input 'b'; expected inputs ['a', 'b']")


# -- a UDF raising GE's exceptions -------------------------------------------------------------

@df.pyflow
def checked(x):
    if int(x.sum()) < 0:
        raise df.DfException(f"negative input {x.tolist()}", 9900001)
    if int(x.sum()) == 0:
        raise df.DfException("zero input")
    return x * 2


@df.pyflow
class Checker:
    def __init__(self, limit):
        self.limit = limit

    @df.method()
    def check(self, x):
        if int(x.sum()) > self.limit:
            raise df.DfException(f"{int(x.sum())} is over {self.limit}", 9900002)
        return x


def test_a_pyflow_function_raising_df_exception_fails_its_transaction_with_the_code():
    x = df.FlowData(name="x")
    graph = df.FlowGraph([inc.fnode()(checked.fnode()(x))])
    with dfir.load(dfir.compile(graph).om) as model:
        for value in (1, -5, 0, 3):
            assert model.feed_data({"x": int32(value)}) == 0
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(4)]
    (ok1, _, ret1), (bad, info, ret2), (_, _, ret3), (ok4, _, ret4) = results
    assert (ret1, ok1[0].numpy().tolist(), ret4, ok4[0].numpy().tolist()) == (0, [3], 0, [7])
    assert (bad, info.transaction_id, ret2) == ([], 2, 9900001)
    assert ret2.message.startswith("UDF checked_fnode.checked raised DfException:9900001:negative input [-5]\n  at ")
    assert ret3 == 145000 and "raised DfException:145000:zero input" in ret3.message


def test_a_pyflow_class_method_raising_df_exception_fails_its_transaction_with_the_code():
    x = df.FlowData()
    graph = df.FlowGraph([Checker.fnode(10).check(x)])
    assert graph.feed_data({x: int32(20)}) == 0
    assert graph.feed_data({x: int32(5)}) == 0
    _, _, ret = graph.fetch_data(timeout=WAIT_MS)
    assert ret == 9900002 and "raised DfException:9900002:20 is over 10" in ret.message
    tensors, _, ret = graph.fetch_data(timeout=WAIT_MS)
    assert (ret, tensors[0].numpy().tolist()) == (0, [5])


@pytest.mark.parametrize("code, fetched", [(0, ff.FLOW_FUNC_FAILED), (0xFFFFFFFF, -1), (True, ff.FLOW_FUNC_FAILED)])
def test_a_df_exception_code_a_message_cannot_carry_as_it_is(code, fetched):
    @df.pyflow
    def failing(x):
        raise df.DfException("no", code)
    x = df.FlowData()
    graph = df.FlowGraph([failing.fnode()(x)])
    assert graph.feed_data({x: int32(1)}) == 0
    assert graph.fetch_data(timeout=WAIT_MS)[2] == fetched


@df.pyflow
def abort_on_two(x):
    if int(x.sum()) == 2:
        raise df.DfAbortException("the sensor is gone", 9900003)
    return x


def test_a_udf_raising_df_abort_exception_stops_the_model():
    x = df.FlowData()
    graph = df.FlowGraph([abort_on_two.fnode()(x)], name="aborting")
    assert graph.feed_data({x: int32(1)}) == 0
    assert graph.feed_data({x: int32(2)}) == 0
    tensors, _, ret = graph.fetch_data(timeout=WAIT_MS)
    assert (ret, tensors[0].numpy().tolist()) == (0, [1])
    tensors, info, ret = graph.fetch_data(timeout=WAIT_MS)
    assert (tensors, info.transaction_id, ret) == ([], 2, 9900003)
    assert ret.message.startswith(f"{ABORT_MARK}UDF abort_on_two_fnode.abort_on_two, which raised "
                                  f"DfAbortException:9900003:the sensor is gone")
    with pytest.raises(GeError) as caught:
        graph.feed_data({x: int32(3)})
    assert caught.value.error_message.startswith(f"the model failed: {ABORT_MARK}UDF abort_on_two_fnode.")
    assert caught.value.error_message.endswith("; close it and load it again")


# -- exception catch (GE's sample_exception, with Python UDFs) ----------------------------------

class Raiser:
    """A UDF project class: raises an exception for transaction 1 when enableExceptionCatch is on."""

    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        ret, self.catch = meta_params.get_attr_bool("enableExceptionCatch")
        return ff.FLOW_FUNC_SUCCESS if ret == ff.FLOW_FUNC_SUCCESS else ret

    @ff.proc_wrapper("i0,i1,o0")
    def add(self, run_context, input_flow_msgs):
        a, b = (msg.get_tensor().numpy() for msg in input_flow_msgs)
        if self.catch and input_flow_msgs[0].get_transaction_id() == 1:
            run_context.raise_exception(-101, 1)
        out = run_context.alloc_tensor_msg(list(a.shape), df.DT_INT32)
        out.get_tensor().numpy()[...] = a + b
        return run_context.set_output(0, out)


def test_exception_catch_reports_a_raised_exception_to_fetch_data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data0, data1 = df.FlowData(), df.FlowData()
    pp = df.FuncProcessPoint(py_func=Raiser, workspace_dir=str(tmp_path / "raiser_ws"))
    pp.set_init_param("enableExceptionCatch", True)
    node = df.FlowNode(input_num=2, output_num=1)
    node.add_process_point(pp)
    graph = df.FlowGraph([node(data0, data1)])
    graph.set_inputs_align_attrs(100, 1000, False)
    graph.set_exception_catch(True)
    info = df.FlowInfo()
    info.start_time, info.end_time = 0, 5
    for _ in range(3):
        assert graph.feed_data({data0: np.ones([3], np.int32), data1: int32(1, 2, 3)}, info) == 0
    results = [graph.fetch_data(timeout=WAIT_MS) for _ in range(3)]
    assert [(info.transaction_id, ret) for _, info, ret in results] == [(1, -101), (2, 0), (3, 0)]
    assert results[1][0][0].numpy().tolist() == [2, 3, 4]


class Refuser:
    """A UDF project class whose proc raises GE's DfException."""

    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i0,o0")
    def refuse(self, run_context, input_flow_msgs):
        raise df.DfException("not today", 77)


def test_a_udf_project_proc_raising_df_exception_returns_flow_func_failed_as_ges_wrapper_does(tmp_path):
    x = df.FlowData()
    pp = df.FuncProcessPoint(py_func=Refuser, workspace_dir=str(tmp_path / "refuser_ws"))
    node = df.FlowNode(input_num=1, output_num=1)
    node.add_process_point(pp)
    graph = df.FlowGraph([node(x)])
    assert graph.feed_data({x: int32(1)}) == 0
    tensors, _, ret = graph.fetch_data(timeout=WAIT_MS)
    assert (tensors, ret) == ([], ff.FLOW_FUNC_FAILED)
    assert "Refuser.refuse raised DfException: DfException:77:not today" in ret.message
