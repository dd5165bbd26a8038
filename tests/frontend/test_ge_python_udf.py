"""GE's Python UDF API as GE's own code uses it: `FuncProcessPoint(py_func=Class)` with
`@proc_wrapper("i0,i1,o0")` specs and the workspace it writes (the calls of GE's sample
sample_udf_python.py, with our own classes in ge_udf_classes.py), GE's message types and flags,
numpy dtypes, `FlowMsgQueue` semantics, the log API, and where a UDF runs
(`df.get_running_*`, `@pyflow(env_hook_func=..., visible_device_enable=...)`)."""
import json
import logging
import queue
from pathlib import Path

import ge_udf_classes as classes
import msg_type_udf_classes as typed
import numpy as np
import pytest

import dfir
import dfir.dataflow as df
import dfir.flow_func as ff
from dfir.core.errors import DfException
from dfir.core.messages import Kind, Message, TransactionMeta
from dfir.frontend.flow_func.meta_params import NodeFacts
from dfir.frontend.flow_func.queue import FlowMsgQueue
from dfir.frontend.flow_func.run_context import ExceptionBoard, RunState
from dfir.frontend.flow_func.running import VISIBLE_DEVICES_ENV
from dfir.frontend.udf.workspace import snake_case
from dfir.ge.error import GeError

WAIT_MS = 10000


@pytest.fixture
def session():
    df.init({})
    yield
    df.finalize()


def sample_graph(workspace):
    """sample_udf_python.py's graph: FlowData -> Router (1 in, 4 out) -> TwoAdds (4 in, 2 out)."""
    data0 = df.FlowData()
    node0 = df.FlowNode(input_num=1, output_num=4)
    node0.add_process_point(df.FuncProcessPoint(py_func=classes.Router, workspace_dir=str(workspace)))
    node1 = df.FlowNode(input_num=4, output_num=2)
    node1.add_process_point(df.FuncProcessPoint(py_func=classes.TwoAdds, workspace_dir=str(workspace)))
    out0, out1 = node1(*node0(data0))
    return data0, df.FlowGraph([out0, out1])


def test_the_sample_runs_and_gives_ges_results(session, tmp_path):
    data0, graph = sample_graph(tmp_path / "py_add_ws")
    flow_info = df.FlowInfo()
    flow_info.start_time, flow_info.end_time = 0, 5
    assert graph.feed_data({data0: np.array([0], dtype=np.int32)}, flow_info) == 0
    tensors, info, ret = graph.fetch_data([0])
    assert (ret, [t.numpy().tolist() for t in tensors], tensors[0].numpy().dtype) == (0, [[2, 3, 4]], np.int32)
    assert (info.start_time, info.end_time, info.transaction_id) == (0, 5, 1)
    assert graph.feed_data({data0: np.array([1], dtype=np.int32)}, flow_info) == 0
    tensors, info, ret = graph.fetch_data([1])
    assert (ret, [t.numpy().tolist() for t in tensors], info.transaction_id) == (0, [[3, 6, 9]], 2)


def test_the_workspace_is_laid_out_as_ges_create_func_ws(tmp_path):
    workspace = tmp_path / "py_add_ws"
    pp = df.FuncProcessPoint(py_func=classes.TwoAdds, workspace_dir=str(workspace))
    df.FuncProcessPoint(py_func=classes.Router, workspace_dir=str(workspace))
    assert pp.compile_config_path == str(workspace / "func_two_adds.json")
    files = sorted(str(p.relative_to(workspace)) for p in workspace.rglob("*") if p.is_file())
    assert files == ["CMakeLists.txt", "func_router.json", "func_two_adds.json", "src_cpp/func_router.cpp",
                     "src_cpp/func_two_adds.cpp", "src_python/func_router.py", "src_python/func_two_adds.py"]
    assert json.loads((workspace / "func_two_adds.json").read_text()) == {
        "func_list": [{"func_name": "add_plain", "inputs_index": [0, 1], "outputs_index": [0], "stream_input": False},
                      {"func_name": "add_double", "inputs_index": [2, 3], "outputs_index": [1],
                       "stream_input": False}],
        "input_num": 4, "output_num": 2, "target_bin": "libfunc_two_adds.so", "workspace": str(workspace),
        "cmakelist_path": "CMakeLists.txt", "heavy_load": True, "py_module": "func_two_adds", "py_class": "TwoAdds"}
    assert (workspace / "src_python/func_two_adds.py").read_text() == Path(classes.__file__).read_text()
    cpp = (workspace / "src_cpp/func_two_adds.cpp").read_text()
    assert 'import("func_two_adds").attr("TwoAdds")' in cpp
    assert '.RegProcFunc("add_plain", &TwoAddsEntry::Proc_add_plain)' in cpp
    assert '.RegProcFunc("add_double", &TwoAddsEntry::Proc_add_double)' in cpp


def test_the_default_workspace_is_named_after_the_class(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pp = df.FuncProcessPoint(py_func=classes.Router)
    assert pp.compile_config_path == str(tmp_path / "Router_ws" / "func_router.json")


@pytest.mark.parametrize("name, snake", [("UserFunc1", "user_func1"), ("Add", "add"), ("HTTPServer", "http_server"),
                                         ("TwoAdds", "two_adds")])
def test_file_names_use_ges_snake_case(name, snake):
    assert snake_case(name) == snake


def test_a_class_without_io_specs_is_refused_as_ge_refuses_it(tmp_path):
    with pytest.raises(DfException) as error:
        df.FuncProcessPoint(py_func=classes.Unwrapped, workspace_dir=str(tmp_path))
    assert error.value.error_code == ff.FLOW_FUNC_FAILED
    assert error.value.error_message == (
        'FuncProcessPoint py_func Unwrapped: no method is decorated with @proc_wrapper("i0,...,o0") naming the '
        "node ports it owns; decorate its procs that way, or make the class a @pyflow UDF")


@pytest.mark.parametrize("cls, message", [
    (classes.GapInInputs, ("FuncProcessPoint py_func GapInInputs: input index 1 is not configured; the "
                           "@proc_wrapper specs own inputs [0, 2]")),
    (classes.RepeatedInput, ("FuncProcessPoint py_func RepeatedInput: input index 0 is configured repeatedly; "
                             "the @proc_wrapper specs own inputs [0, 0]")),
    (classes.GapInOutputs, ("FuncProcessPoint py_func GapInOutputs: output index 0 is not configured; the "
                            "@proc_wrapper specs own outputs [1]")),
])
def test_ports_are_checked_as_ge_checks_them(tmp_path, cls, message):
    with pytest.raises(ValueError) as error:
        df.FuncProcessPoint(py_func=cls, workspace_dir=str(tmp_path))
    assert str(error.value) == message


def test_a_class_of_the_main_script_is_refused(tmp_path):
    cls = type("Script", (classes.Router,), {"__module__": "__main__"})
    with pytest.raises(GeError) as error:
        df.FuncProcessPoint(py_func=cls, workspace_dir=str(tmp_path))
    assert error.value.error_message == (
        "FuncProcessPoint py_func Script: the class is defined in __main__, which the runtime cannot import "
        "again; define it in a module of its own (the workspace copies that module)")


def test_other_py_funcs_are_refused():
    with pytest.raises(GeError) as error:
        df.FuncProcessPoint(py_func=42)
    assert error.value.error_message == ('FuncProcessPoint py_func must be a UDF class (its procs decorated with '
                                         '@proc_wrapper("i0,...,o0")) or come from @pyflow, got int')


# -- message types, flags, dtypes -----------------------------------------------------------------

def test_message_types_and_flags_have_ges_values():
    assert [int(t) for t in (ff.MSG_TYPE_TENSOR_DATA, ff.MSG_TYPE_RAW_MSG, ff.MSG_TYPE_TORCH_TENSOR_MSG,
                             ff.MSG_TYPE_USER_DEFINE_START, ff.MSG_TYPE_PICKLED_MSG)] == [0, 1, 1023, 1024, 65535]
    assert (int(ff.FLOW_FLAG_EOS), int(ff.FLOW_FLAG_SEG)) == (1, 2)
    assert ff.MsgType.TENSOR_DATA is ff.MSG_TYPE_TENSOR_DATA and repr(ff.MSG_TYPE_RAW_MSG) == "<MsgType.MSG_TYPE_RAW_MSG: 1>"


def test_set_msg_type_marks_a_message_with_a_ge_or_user_type():
    msg = ff.FlowMsg(Kind.RAW, np.zeros(4, np.uint8))
    assert msg.get_msg_type() == ff.MSG_TYPE_RAW_MSG
    msg.set_msg_type(ff.MSG_TYPE_USER_DEFINE_START + 5)
    assert (msg.get_msg_type(), int(msg.get_msg_type()), msg.get_msg_type().name) == (1029, 1029, "MSG_TYPE_1029")
    msg.set_msg_type(ff.MSG_TYPE_PICKLED_MSG)
    assert msg.get_msg_type() is ff.MSG_TYPE_PICKLED_MSG


@pytest.mark.parametrize("bad", [-1, 65536, "1", 1.0, True])
def test_set_msg_type_refuses_what_is_no_uint16(bad):
    with pytest.raises(TypeError) as error:
        ff.FlowMsg(Kind.EMPTY).set_msg_type(bad)
    assert str(error.value) == f"set_msg_type: msg_type must be an int in [0, 65535], got {bad!r}"


def test_tensor_numpy_copies_on_request_as_in_ge():
    tensor = ff.FlowMsg(Kind.TENSOR, np.zeros(2, np.int32)).get_tensor()
    copied = tensor.numpy(copy=True)
    copied[0] = 5
    assert (tensor.numpy().tolist(), copied.tolist(), tensor.numpy(True) is tensor.numpy()) == ([0, 0], [5, 0], False)


def test_tensor_data_types_are_numpy_types_as_in_ge():
    tensor = ff.FlowMsg(Kind.TENSOR, np.zeros(3, np.float32)).get_tensor()
    assert tensor.get_data_type() is np.float32
    assert ff.FlowMsg(Kind.TENSOR, np.zeros(3, np.bool_)).get_tensor().get_data_type() is np.bool_


# -- FlowMsgQueue ---------------------------------------------------------------------------------

class FakeSource:
    """An input channel holding `waiting` messages; records each take's (block, timeout)."""

    def __init__(self, waiting, depth=None):
        self.waiting = list(waiting)
        self.takes = []
        if depth is not None:
            self.depth = lambda: depth

    def take(self, block=True, timeout=None):
        self.takes.append((block, timeout))
        if not self.waiting:
            raise queue.Empty
        return self.waiting.pop(0)

    def pending(self):
        return len(self.waiting)


def tensor_message(value):
    return Message(TransactionMeta(1), Kind.TENSOR, np.array(value))


def test_queue_get_takes_its_timeout_in_milliseconds_as_ge():
    source = FakeSource([tensor_message([1]), tensor_message([2]), tensor_message([3])])
    q = FlowMsgQueue(source)
    assert [q.get(timeout=250).tolist(), q.get().tolist(), q.get_nowait().tolist()] == [[1], [2], [3]]
    assert source.takes == [(True, 0.25), (True, None), (False, None)]
    with pytest.raises(queue.Empty):
        q.get(timeout=0)


def test_queue_get_refuses_a_negative_timeout():
    with pytest.raises(ValueError) as error:
        FlowMsgQueue(FakeSource([])).get(timeout=-1)
    assert str(error.value) == "FlowMsgQueue.get: 'timeout' must be a non-negative number of milliseconds, got -1"


def test_queue_full_compares_the_waiting_messages_with_the_depth():
    q = FlowMsgQueue(FakeSource([tensor_message(k) for k in range(2)], depth=2))
    assert (q.maxsize, q.qsize(), q.full(), q.empty()) == (2, 2, True, False)
    q.get()
    assert (q.full(), FlowMsgQueue(FakeSource([])).maxsize) == (False, 128)


@pytest.mark.parametrize("call, method", [(lambda q: q.put(1), "put"), (lambda q: q.put_nowait(1), "put_nowait"),
                                          (lambda q: q.task_done(), "task_done"), (lambda q: q.join(), "join")])
def test_queue_refuses_what_ge_refuses(call, method):
    with pytest.raises(NotImplementedError) as error:
        call(FlowMsgQueue(FakeSource([])))
    assert str(error.value) == (f"FlowMsgQueue.{method} is not allowed: the runtime fills the queue; a UDF can "
                                f"only get() from it")


# -- logging --------------------------------------------------------------------------------------

def test_is_log_enable_takes_ges_type_and_level(caplog):
    with caplog.at_level(logging.INFO, logger="dfir.flow_func"):
        assert ff.logger.is_log_enable(ff.DEBUG_LOG, ff.INFO) and ff.logger.is_log_enable(ff.RUN_LOG, ff.ERROR)
        assert not ff.logger.is_log_enable(ff.DEBUG_LOG, ff.DEBUG)
        assert not ff.logger.is_log_enable(0, 1)  # plain ints are no log type and level, as in GE
        assert ff.logger.is_log_enable(logging.INFO)


def test_a_message_whose_arguments_do_not_fit_is_logged_as_written(caplog):
    with caplog.at_level(logging.INFO, logger="dfir.flow_func"):
        ff.FlowFuncLogger().info("Get attr int [%d]", None)
        ff.logger.info("100% done")
    assert [r.getMessage() for r in caplog.records] == ["[] Get attr int [%d]", "[] 100% done"]


# -- where a UDF runs -----------------------------------------------------------------------------

def test_the_placement_getters_outside_a_udf_return_none_and_log(caplog):
    with caplog.at_level(logging.ERROR, logger="dfir.flow_func"):
        assert (df.get_running_device_id(), df.get_running_instance_id(), df.get_running_instance_num()) == \
            (None, None, None)
    assert [r.getMessage() for r in caplog.records] == [
        f"[] running {what} is not set: no UDF is running here (or this process hosts several and the call is "
        "outside them)" for what in ("device id", "instance id", "instance num")]


def deploy_options(folder, placements):
    """Compile options placing each node on devices of one server with devices 0 and 1."""
    deploy, resources = folder / "deploy.json", folder / "resources.json"
    deploy.write_text(json.dumps({"batch_deploy_info": [{"flow_node_list": [name], "logic_device_list": devices}
                                                        for name, devices in placements.items()]}))
    resources.write_text(json.dumps({"cluster": [{"cluster_nodes": [{
        "node_id": 0, "node_type": "x86", "ipaddr": "127.0.0.1", "item_list": [{"item_id": 0}, {"item_id": 1}]}]}]}))
    return {"ge.experiment.data_flow_deploy_info_path": str(deploy), "ge.resourceConfigPath": str(resources)}


def fetch_rows(model, count):
    rows = []
    for _ in range(count):
        outputs, ret = model.fetch(timeout=WAIT_MS)
        assert ret == 0
        rows.append(list(np.asarray(outputs[0])))
    return sorted(rows)


@df.pyflow
def where_am_i(x):
    import os
    return np.array([df.get_running_device_id(), df.get_running_instance_id(), df.get_running_instance_num(),
                     int(os.environ.get(VISIBLE_DEVICES_ENV, "-9"))])


def test_a_pyflow_udf_learns_its_device_and_instance(tmp_path):
    node = where_am_i.fnode()
    graph = df.FlowGraph([node(df.FlowData(name="x"))])
    with dfir.load(dfir.compile(graph, deploy_options(tmp_path, {node.name: "0:0:0~1"})).om) as model:
        for t in range(2):
            model.feed([np.array([t])])
        assert fetch_rows(model, 2) == [[0, 0, 2, -9], [1, 1, 2, -9]]


@df.pyflow(visible_device_enable=True)
def where_visible(x):
    import os
    return np.array([df.get_running_device_id(), int(os.environ.get(VISIBLE_DEVICES_ENV, "-9"))])


def test_visible_device_enable_shows_the_udf_its_device_alone(tmp_path):
    node = where_visible.fnode()
    graph = df.FlowGraph([node(df.FlowData(name="x"))])
    with dfir.load(dfir.compile(graph, deploy_options(tmp_path, {node.name: "0:0:1"})).om) as model:
        model.feed([np.array([0])])
        assert fetch_rows(model, 1) == [[0, 1]]


def prepare_environment():
    import os
    os.environ["DFIR_TEST_HOOKED"] = str(int(os.environ.get("DFIR_TEST_HOOKED", "0")) + 1)


@df.pyflow(env_hook_func=prepare_environment)
class Hooked:
    def __init__(self):
        import os
        self.at_init = os.environ.get("DFIR_TEST_HOOKED")

    @df.method()
    def report(self, x):
        return [self.at_init, df.get_running_instance_num()]


def test_env_hook_func_runs_once_before_the_udf_is_built():
    graph = df.FlowGraph([Hooked.fnode().report(df.FlowData())])
    with dfir.load(dfir.compile(graph).om) as model:
        model.feed([np.array([0])])
        model.feed([np.array([1])])
        assert [model.fetch(timeout=WAIT_MS)[0][0] for _ in range(2)] == [["1", 1], ["1", 1]]


def test_a_udf_project_learns_its_device_and_instance(tmp_path):
    node = df.FlowNode(input_num=1, output_num=1, name="placed")
    node.add_process_point(df.FuncProcessPoint(py_func=classes.Placed, workspace_dir=str(tmp_path / "ws")))
    graph = df.FlowGraph([node(df.FlowData(name="x"))])
    with dfir.load(dfir.compile(graph, deploy_options(tmp_path, {"placed": "0:0:0~1"})).om) as model:
        for t in range(2):
            model.feed_data([np.array([t])])
        rows = sorted(model.fetch_data(timeout=WAIT_MS)[0][0].numpy().tolist() for _ in range(2))
    # heavy_load (GE's workspaces set it) runs both instances on the devices' host CPU, here in one
    # process: each call still learns its own instance
    assert [row[:7] for row in rows] == [[-1, 0, 2, -1, 0, 2, 0], [-1, 1, 2, -1, 1, 2, 1]]
    assert rows[0][7] == rows[1][7]


# -- GE's names -----------------------------------------------------------------------------------

GE_FLOW_FUNC_NAMES = [
    "FLOW_FLAG_EOS", "FLOW_FLAG_SEG", "FLOW_FUNC_ERR_ATTR_NOT_EXITS", "FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH",
    "FLOW_FUNC_ERR_DRV_ERROR", "FLOW_FUNC_ERR_EVENT_ERROR", "FLOW_FUNC_ERR_MEM_BUF_ERROR", "FLOW_FUNC_ERR_PARAM_INVALID",
    "FLOW_FUNC_ERR_QUEUE_ERROR", "FLOW_FUNC_ERR_TIME_OUT_ERROR", "FLOW_FUNC_ERR_USER_DEFINE_END",
    "FLOW_FUNC_ERR_USER_DEFINE_START", "FLOW_FUNC_FAILED", "FLOW_FUNC_STATUS_EXIT", "FLOW_FUNC_STATUS_REDEPLOYING",
    "FLOW_FUNC_SUCCESS", "MSG_TYPE_PICKLED_MSG", "MSG_TYPE_RAW_MSG", "MSG_TYPE_TENSOR_DATA", "MSG_TYPE_TORCH_TENSOR_MSG",
    "MSG_TYPE_USER_DEFINE_START", "AffinityPolicy", "BalanceConfig", "FlowFuncLogger", "FlowMsg", "FlowMsgQueue",
    "MetaRunContext", "PyMetaParams", "logger", "FlowFuncInfos", "FlowFuncRegister", "init_wrapper", "proc_wrapper",
    "MAX_USER_DATA_SIZE", "DEBUG_LOG", "RUN_LOG", "DEBUG", "INFO", "WARN", "ERROR"]


def test_every_public_name_of_ges_flow_func_is_there():
    assert [name for name in GE_FLOW_FUNC_NAMES if not hasattr(ff, name)] == []


def test_keyword_arguments_take_ges_names():
    params = ff.PyMetaParams(NodeFacts("node", 1, 1))
    assert params.get_attr_int(name="absent") == (ff.FLOW_FUNC_ERR_ATTR_NOT_EXITS, -1)
    config = ff.BalanceConfig(1, 2)
    config.set_data_pos(pos=[(0, 1)])
    state = RunState("f", {0: 0}, TransactionMeta(3), lambda *args: (0, [], ""), ExceptionBoard())
    context = ff.MetaRunContext(state)
    assert context.set_output(index=0, output=np.array([1])) == ff.FLOW_FUNC_SUCCESS
    context.raise_exception(exception_code=7, user_context_id=9)
    assert (config.data_pos, len(state.outputs), context.get_exception(), ff.MAX_USER_DATA_SIZE) == (
        [(0, 1)], 1, (True, 7, 9), 64)


def test_balance_config_answers_ges_inner_config_accessor():
    config = ff.BalanceConfig(2, 1, ff.AffinityPolicy.ROW_AFFINITY)
    assert config.get_inner_config() is config


def test_flow_func_infos_record_what_ge_records():
    infos = ff.FlowFuncInfos()
    infos.add_func_params("add1", "i0,i1,o0")
    infos.add_running_resources_info("cpu", 2)
    infos.set_env_hook_func(print)
    infos.set_visible_device_enable(True)
    assert (infos.get_all_func_params(), infos.get_running_resources_info(), infos.get_env_hook_func(),
            infos.get_visible_device_enable(), infos.get_func_object()) == (
        {"add1": "i0,i1,o0"}, [{"type": "cpu", "num": 2}], print, True, None)


def typed_pipeline(tmp_path):
    data = df.FlowData()
    sender, receiver = df.FlowNode(input_num=1, output_num=1), df.FlowNode(input_num=1, output_num=1)
    sender.add_process_point(df.FuncProcessPoint(py_func=typed.TypedSender, workspace_dir=str(tmp_path / "ws")))
    receiver.add_process_point(df.FuncProcessPoint(py_func=typed.TypedReceiver,
                                                   workspace_dir=str(tmp_path / "ws")))
    sent = sender(data)
    return data, sent, receiver(sent)


def test_a_user_message_type_reaches_the_next_udf_and_fetch_gives_its_bytes(session, tmp_path):
    data, sent, received = typed_pipeline(tmp_path)
    graph = df.FlowGraph([received, sent])
    assert graph.feed({data: df.Tensor(np.array([7, 8], dtype=np.uint8))}) == 0
    values, ret = graph.fetch()
    assert ret == 0
    assert values[0].numpy().tolist() == [1030, 2, 7]
    assert (values[1], values[1].msg_type) == (b"\x07\x08", 1030)


class Point:
    def __init__(self, x):
        self.x = x


df.msg_type_register.register(1031, Point, lambda point: bytes([point.x]), lambda data: Point(data[0]))


def test_a_registered_object_reaches_a_udf_project_as_raw_bytes_of_its_type(session, tmp_path):
    data = df.FlowData()
    receiver = df.FlowNode(input_num=1, output_num=1)
    receiver.add_process_point(df.FuncProcessPoint(py_func=typed.TypedReceiver, workspace_dir=str(tmp_path)))
    graph = df.FlowGraph([receiver(data)])
    assert graph.feed({data: Point(9)}) == 0
    values, ret = graph.fetch()
    assert (values[0].numpy().tolist(), ret) == ([1031, 1, 9], 0)
