"""Python UDF projects end to end: the seed's `Add` class, compile configs and their errors, return
codes and exceptions at `fetch_data`, init params, invoked GE graphs, packing and `dfir udf new`."""
import json
import logging
import runpy
import subprocess
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

import dfir
from dfir.core.flow_info import FlowInfo
import dfir.data_type as dt
import dfir.flow_func as ff
from dfir.ge.error import GeError
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om
from dfir.tools.cli import main as cli
from project_helpers import add_graph, assert_raise_stops_a_graph_that_does_not_catch, catching, int32, project_graph
from dfir.frontend.udf.sources import pack_sources

# The seed's Python UDF, as written there (its imports adapted): Add1 and AddNN verbatim; Add2's
# body is left out in the seed ("xxxx"), here it runs Add1's.
SEED_ADD = '''
import dfir.flow_func as ff
import dfir.data_type as dt


class Add():
    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        name = meta_params.get_name()
        ff.logger.info("func name is %s", name)
        input_num = meta_params.get_input_num()
        ff.logger.info("input num %d", input_num)
        device_id = meta_params.get_running_device_id()
        ff.logger.info("device id %d", device_id)
        out_type = meta_params.get_attr_tensor_dtype("out_type")
        if out_type[0] != ff.FLOW_FUNC_SUCCESS:
             ff.logger.error("get dtype failed")
             return ff.FLOW_FUNC_FAILED
        self.count = 0
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper()
    def Add1(self, run_context, input_flow_msgs):
        return self.add(run_context, input_flow_msgs, 0)

    @ff.proc_wrapper()
    def Add2(self, run_context, input_flow_msgs):
        return self.add(run_context, input_flow_msgs, 1)  # output indexes are the node's (outputs_index [1])

    def add(self, run_context, input_flow_msgs, output):
        for msg in input_flow_msgs:
            ff.logger.error("msg code %d", msg.get_ret_code())
            if msg.get_ret_code() != ff.FLOW_FUNC_SUCCESS:
                ff.logger.error("invalid input")
                return ff.FLOW_FUNC_FAILED
        if input_flow_msgs.__len__() != 2:
            ff.logger.error("invalid input")
            return ff.FLOW_FUNC_ERR_PARAM_INVALID
        tensor1 = input_flow_msgs[0].get_tensor()
        tensor2 = input_flow_msgs[1].get_tensor()
        dtype1 = tensor1.get_data_type()
        dtype2 = tensor2.get_data_type()
        if dtype1 != dtype2:
            ff.logger.error("input data type is not same")
            return ff.FLOW_FUNC_FAILED
        ff.logger.info("element size %d", tensor1.get_data_size())
        ff.logger.event("data type is same")
        shape1 = tensor1.get_shape()
        shape2 = tensor2.get_shape()
        if shape1 != shape2:
            ff.logger.error("input data shape is not same")
            return ff.FLOW_FUNC_FAILED
        ff.logger.info("shape is same")
        out = run_context.alloc_tensor_msg(shape1, dt.DT_INT32)
        data_size = out.get_tensor().get_data_size()
        ff.logger.error("data_size %d", data_size)
        ele_cnt = out.get_tensor().get_element_cnt()
        ff.logger.error("ele_cnt %d", ele_cnt)
        np1 = tensor1.numpy()
        np2 = tensor2.numpy()
        a = out.get_tensor().numpy()
        a[...] = np1 + np2
        ff.logger.event("prepare to set output in add1")
        if run_context.set_output(output, out) != ff.FLOW_FUNC_SUCCESS:
            ff.logger.error("set output failed")
            return ff.FLOW_FUNC_FAILED
        self.count += 1
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper()
    def AddNN(self, run_context, input_flow_msgs):
        ret = run_context.run_flow_model("invoke_graph", input_flow_msgs, 1000)
        if ret[0] != ff.FLOW_FUNC_SUCCESS:
            ff.logger.error("run nn failed")
            return ff.FLOW_FUNC_FAILED
        ff.logger.event("run nn success")
        i = 2  # its outputs_index: [2]
        for out in ret[1]:
            if run_context.set_output(i, out) != ff.FLOW_FUNC_SUCCESS:
                ff.logger.error("set output failed")
                return ff.FLOW_FUNC_FAILED
            i = i + 1
        return ff.FLOW_FUNC_SUCCESS
'''

SEED_FUNCS = [{"func_name": "Add1", "inputs_index": [0, 1], "outputs_index": [0]},
              {"func_name": "Add2", "inputs_index": [2], "outputs_index": [1]},
              {"func_name": "AddNN", "inputs_index": [3, 4], "outputs_index": [2]}]


def write_project(folder: Path, source: str, funcs: list, input_num: int, output_num: int,
                  module: str = "func_add", cls: str = "Add", **extra) -> Path:
    """A Python project under `folder` (workspace `add_ws`); returns its compile config path."""
    sources = folder / "add_ws" / "src_python"
    sources.mkdir(parents=True, exist_ok=True)
    (sources / f"{module}.py").write_text(textwrap.dedent(source))
    config = {"func_list": funcs, "input_num": input_num, "output_num": output_num,
              "workspace": "./add_ws", "target_bin": "libfunc_add.so", "py_module": module,
              "py_class": cls, **extra}
    path = folder / "add_func.json"
    path.write_text(json.dumps(config))
    return path


@pytest.fixture
def seed_model(tmp_path):
    config = write_project(tmp_path, SEED_ADD, SEED_FUNCS, 5, 3)
    graph = project_graph(config, 5, 3, {"out_type": dt.DT_INT32}, {"invoke_graph": add_graph()})
    with dfir.load(dfir.compile(graph).om) as model:
        yield model


def test_the_seed_add_class_runs_each_func_on_its_ports(seed_model):
    seed_model.feed_data([int32(1, 2), int32(10, 20), int32(5, 5), int32(3, 4), int32(30, 40)])
    sum_, _, ret = seed_model.fetch_data(indexes=[0], timeout=5000)
    assert ret == 0 and sum_[0].numpy().tolist() == [11, 22]
    nn_sum, _, ret = seed_model.fetch_data(indexes=[2], timeout=5000)
    assert ret == 0 and nn_sum[0].numpy().tolist() == [33, 44]
    single, info, ret = seed_model.fetch_data(indexes=[1], timeout=5000)
    assert single == [] and ret == ff.FLOW_FUNC_ERR_PARAM_INVALID and info.transaction_id == 1
    assert ret.message == ("UDF add.Add2 returned FLOW_FUNC_ERR_PARAM_INVALID (164000); "
                           "last error logged: invalid input")


def test_a_seed_failure_fails_its_transaction_only(seed_model):
    seed_model.feed_data([int32(1, 2), int32(1, 2, 3), int32(0), int32(0, 0), int32(0, 0)])
    seed_model.feed_data([int32(1, 2), int32(3, 4), int32(0), int32(0, 0), int32(0, 0)])
    bad, info, ret = seed_model.fetch_data(indexes=[0], timeout=5000)
    assert bad == [] and info.transaction_id == 1 and ret == ff.FLOW_FUNC_FAILED
    assert ret.message == ("UDF add.Add1 returned FLOW_FUNC_FAILED (564000); last error logged: "
                           "input data shape is not same")
    good, info, ret = seed_model.fetch_data(indexes=[0], timeout=5000)
    assert ret == 0 and info.transaction_id == 2 and good[0].numpy().tolist() == [4, 6]


def test_the_seed_init_fails_the_load_without_its_init_param(tmp_path):
    config = write_project(tmp_path, SEED_ADD, SEED_FUNCS, 5, 3)
    graph = project_graph(config, 5, 3, closures={"invoke_graph": add_graph()})
    om = dfir.compile(graph).om
    with pytest.raises(GeError) as error:
        dfir.load(om)
    assert error.value.error_message == ("node 'add': Add.init_flow_func returned FLOW_FUNC_FAILED "
                                         "(564000); last error logged: get dtype failed")


@contextmanager
def udf_log_file(path: Path):
    """UDF log records (`node|instance|message`) go to `path`, from worker processes too."""
    log = logging.getLogger("dfir.flow_func")
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(udf_node)s|%(udf_instance)s|%(message)s"))
    level = log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        yield
    finally:
        log.removeHandler(handler)
        handler.close()
        log.setLevel(level)


def test_log_records_name_the_node(tmp_path):
    config = write_project(tmp_path, SEED_ADD, SEED_FUNCS[:1], 2, 1)
    graph = project_graph(config, 2, 1, {"out_type": dt.DT_INT32})
    with udf_log_file(tmp_path / "udf.log"), dfir.load(dfir.compile(graph).om) as model:
        model.feed_data([int32(1), int32(2)])
        model.fetch_data(timeout=5000)
    lines = (tmp_path / "udf.log").read_text().splitlines()
    assert "add|0|[add#0 init_flow_func] func name is add" in lines
    assert "add|0|[add#0 Add1] shape is same" in lines


# -- compile configs ------------------------------------------------------------------------------

ONE_FUNC = [{"func_name": "Add1"}]
DELETE = object()  # a change that removes the key


@pytest.mark.parametrize("change, message", [
    ({"func_list": []}, "func_list must be a non-empty list of funcs, got []"),
    ({"func_list": None}, "func_list must be a non-empty list of funcs, got null"),
    ({"func_list": ["Add1"]}, "func_list[0] must be an object, got a string"),
    ({"func_list": [{"inputs_index": [0, 1]}]}, "func_list[0].func_name must be a non-empty string, got nothing"),
    ({"func_list": [{"func_name": "Add1", "inputs": [0]}]},
     "func_list[0].inputs is not a known key; expected one of ['func_name', 'inputs_index', "
     "'outputs_index', 'stream_input']"),
    ({"func_list": [{"func_name": "Add1", "inputs_index": "0"}]},
     'func_list[0].inputs_index must be a list of ints >= 0, got "0"'),
    ({"func_list": [{"func_name": "Add1", "inputs_index": []}]},
     "func_list[0].inputs_index is empty; func 'Add1' needs at least one input"),
    ({"func_list": [{"func_name": "Add1", "stream_input": "Queue"}]},
     'func_list[0].stream_input must be true or false, got "Queue"'),
    ({"func_list": [{"func_name": "Add1", "inputs_index": [0], "outputs_index": [0]},
                    {"func_name": "Add1", "inputs_index": [1], "outputs_index": []}]},
     "func_list names func 'Add1' twice"),
    ({"func_list": [{"func_name": "Add1", "inputs_index": [0], "outputs_index": [0]},
                    {"func_name": "Add2", "outputs_index": []}]},
     "func_list[1].inputs_index is missing; with several funcs each func lists its ports"),
    ({"func_list": [{"func_name": "Add1", "inputs_index": [0, 0]}]},
     "func_list[*].inputs_index cover ports [0, 0]; with input_num 2 each of 0..1 must be owned by "
     "exactly one func"),
    ({"func_list": [{"func_name": "Add1", "outputs_index": [1]}]},
     "func_list[*].outputs_index cover ports [1]; with output_num 1 each of 0..0 must be owned by "
     "exactly one func"),
    ({"input_num": DELETE}, "input_num is missing; it gives the number of node inputs"),
    ({"output_num": -1}, "output_num must be an int >= 0, got -1"),
    ({"input_num": True}, "input_num must be an int >= 0, got true"),
    ({"workspace": DELETE}, "workspace is missing"),
    ({"workspace": ""}, 'workspace must be a non-empty string, got ""'),
    ({"heavy_load": "yes"}, 'heavy_load must be true or false, got "yes"'),
    ({"py_class": DELETE}, "py_class is missing; a Python project gives both py_module and py_class"),
    ({"py_module": "func-add"}, 'py_module must name a Python file of src_python (e.g. "func_add"), got "func-add"'),
    ({"target_bin": "add.so"}, 'target_bin must name a library lib<name>.so, got "add.so"'),
    ({"resource_type": "Ascend"}, "resource_type is Ascend, but a Python UDF runs on the host (X86)"),
    ({"resource_type": "Riscv"}, "resource_type must be one of ['X86', 'Aarch', 'Ascend'], got \"Riscv\""),
    ({"buf_cfg": {}}, "buf_cfg is not supported yet"),
    ({"workspce": "."}, "workspce is not a known key; expected one of ['func_list', 'input_num', "
                        "'output_num', 'workspace', 'target_bin', 'heavy_load', 'py_module', 'py_class', "
                        "'cmakelist_path', 'resource_type', 'toolchain', 'udf_timeout_ms']"),
    ({"udf_timeout_ms": 0}, "udf_timeout_ms must be a timeout in [1, 86400000] (milliseconds), got 0"),
    ({"udf_timeout_ms": 86400001}, "udf_timeout_ms must be a timeout in [1, 86400000] (milliseconds), got 86400001"),
    ({"udf_timeout_ms": "5000"}, 'udf_timeout_ms must be a timeout in [1, 86400000] (milliseconds), got "5000"'),
    ({"udf_timeout_ms": 1.5}, "udf_timeout_ms must be a timeout in [1, 86400000] (milliseconds), got 1.5"),
])
def test_every_config_error_names_the_file_and_key(tmp_path, change, message):
    config = write_project(tmp_path, SEED_ADD, ONE_FUNC, 2, 1)
    document = {**json.loads(config.read_text()), **change}
    config.write_text(json.dumps({key: value for key, value in document.items() if value is not DELETE}))
    with pytest.raises(GeError) as error:
        dfir.compile(project_graph(config, 2, 1))
    assert error.value.error_message == f"compile config {config}: {message}"


@pytest.mark.parametrize("text, message", [
    ("{\"func_list\": [", "compile config {path} is not valid JSON: Expecting value at line 1 column 16"),
    ("{\"func_list\": " + "[" * 4000 + "]" * 4000 + "}",
     "compile config {path} is not valid JSON: arrays and objects nest deeper than 64 levels"),
    ("[1, 2]", "compile config {path}: the top level must be a JSON object, got a list"),
])
def test_configs_that_are_no_json_objects_are_refused(tmp_path, text, message):
    config = tmp_path / "bad.json"
    config.write_text(text)
    with pytest.raises(GeError) as error:
        dfir.compile(project_graph(config, 2, 1))
    assert error.value.error_message == message.format(path=config)


def test_a_missing_config_file_is_named(tmp_path):
    config = tmp_path / "absent.json"
    with pytest.raises(GeError) as error:
        dfir.compile(project_graph(config, 2, 1))
    assert error.value.error_message == f"compile config {config}: cannot be read: No such file or directory"


@pytest.mark.parametrize("setup, message", [
    (lambda ws: (ws / "src_python" / "func_add.py").unlink(),
     "py_module 'func_add' names src_python/func_add.py, which does not exist"),
    (lambda ws: (ws / "src_python" / "func_add.py").write_text("import no_such_module\n"),
     "importing src_python/func_add.py raised ModuleNotFoundError: No module named 'no_such_module'"),
    (lambda ws: (ws / "src_python" / "func_add.py").write_text("class Sub:\n    pass\n"),
     "src_python/func_add.py has no class 'Add' (py_class)"),
    (lambda ws: (ws / "src_python" / "func_add.py").write_text("class Add:\n    def Add2(self):\n        pass\n"),
     "func_list[0].func_name 'Add1' is not a method of class Add (src_python/func_add.py)"),
])
def test_project_files_are_checked_at_compile_time(tmp_path, setup, message):
    config = write_project(tmp_path, SEED_ADD, ONE_FUNC, 2, 1)
    setup(tmp_path / "add_ws")
    with pytest.raises(GeError) as error:
        dfir.compile(project_graph(config, 2, 1))
    assert error.value.error_message == f"compile config {config}: {message}"


def test_a_workspace_that_is_no_folder_is_named(tmp_path):
    config = write_project(tmp_path, SEED_ADD, ONE_FUNC, 2, 1, workspace="./nowhere")
    with pytest.raises(GeError) as error:
        dfir.compile(project_graph(config, 2, 1))
    assert error.value.error_message == (f"compile config {config}: workspace {tmp_path / 'nowhere'} "
                                         f"is not a folder")


def test_node_ports_must_match_the_config(tmp_path):
    config = write_project(tmp_path, SEED_ADD, ONE_FUNC, 2, 1)
    with pytest.raises(GeError) as error:
        dfir.compile(project_graph(config, 3, 1))
    assert error.value.error_message.endswith(
        f"has 3 inputs and 1 outputs but compile config {config} says input_num 2 and output_num 1")


def test_the_plan_carries_the_project(tmp_path):
    config = write_project(tmp_path, SEED_ADD, SEED_FUNCS, 5, 3)
    graph = project_graph(config, 5, 3, {"out_type": dt.DT_INT32, "scale": [1.5]},
                          {"invoke_graph": add_graph()})
    compiled = dfir.compile(graph)
    plan = json.loads(bytes(read_om(compiled.om).models[0].partition(PartitionType.FLOW_MODEL).data))
    pp = plan["nodes"][0]["pp"]
    assert pp == {"kind": "py_project", "udf": 0, "py_module": "func_add", "py_class": "Add",
                  "funcs": [{"name": "Add1", "inputs": [0, 1], "outputs": [0], "stream_input": False},
                            {"name": "Add2", "inputs": [2], "outputs": [1], "stream_input": False},
                            {"name": "AddNN", "inputs": [3, 4], "outputs": [2], "stream_input": False}],
                  "init_params": {"out_type": {"type": "dtype", "value": "DT_INT32"},
                                  "scale": {"type": "list_float", "value": [1.5]}},
                  "closures": {"invoke_graph": 0}}
    assert plan["ge_graphs"][0]["name"] == "add_graph"
    assert 'init_params = {out_type = #df.dtype<DT_INT32>, scale = [1.500000e+00 : f64]}' in compiled.ir


def test_packing_is_deterministic_and_skips_caches(tmp_path):
    config = write_project(tmp_path, SEED_ADD, ONE_FUNC, 2, 1)
    sources = tmp_path / "add_ws" / "src_python"
    first = pack_sources(sources)
    (sources / "__pycache__").mkdir()
    (sources / "__pycache__" / "func_add.cpython-311.pyc").write_bytes(b"junk")
    assert pack_sources(sources) == first
    graph = project_graph(config, 2, 1, {"out_type": dt.DT_INT32})
    assert dfir.compile(graph).om == dfir.compile(graph).om


def test_a_saved_model_runs_in_a_fresh_process_without_the_workspace(tmp_path):
    project = tmp_path / "project"
    config = write_project(project, SEED_ADD.replace("a[...] = np1 + np2", "a[...] = np1 + np2 + helper.BIAS")
                           .replace("import dfir.data_type as dt", "import dfir.data_type as dt\nfrom . import helper"),
                           ONE_FUNC, 2, 1)
    (project / "add_ws" / "src_python" / "helper.py").write_text("BIAS = 100\n")
    path = dfir.compile(project_graph(config, 2, 1, {"out_type": dt.DT_INT32})).save(tmp_path / "add")
    for item in sorted(project.rglob("*"), reverse=True):
        item.unlink() if item.is_file() else item.rmdir()
    script = ("import numpy as np, dfir\n"
              f"m = dfir.load({path!r})\n"
              "m.feed_data([np.array([1], np.int32), np.array([2], np.int32)])\n"
              "out, _, ret = m.fetch_data(timeout=10000)\n"
              "print(int(ret), out[0].numpy().tolist())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert done.stdout.strip() == "0 [103]", done.stderr


# -- return codes and exceptions -----------------------------------------------------------------

FAULTY = '''
import numpy as np
import dfir.flow_func as ff


class Faulty:
    @ff.proc_wrapper()
    def Raise(self, run_context, input_flow_msgs):
        raise ValueError(f"bad value {input_flow_msgs[0].get_tensor().numpy().tolist()}")

    def RaiseUnwrapped(self, run_context, input_flow_msgs):
        raise KeyError("k")

    @ff.proc_wrapper()
    def UserCode(self, run_context, input_flow_msgs):
        return 9900001

    @ff.proc_wrapper()
    def OutOfRange(self, run_context, input_flow_msgs):
        if run_context.set_output(3, input_flow_msgs[0]) != ff.FLOW_FUNC_SUCCESS:
            return ff.FLOW_FUNC_FAILED
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper()
    def NoCode(self, run_context, input_flow_msgs):
        run_context.set_output(0, input_flow_msgs[0])

    @ff.proc_wrapper()
    def Raises(self, run_context, input_flow_msgs):
        run_context.raise_exception(9900002, 77)
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper()
    def UnknownModel(self, run_context, input_flow_msgs):
        ret, outputs = run_context.run_flow_model("no_such_graph", input_flow_msgs, 100)
        return ret

    @ff.proc_wrapper()
    def FailedOutput(self, run_context, input_flow_msgs):
        msg = input_flow_msgs[0]
        msg.set_ret_code(ff.FLOW_FUNC_ERR_TIME_OUT_ERROR)
        return run_context.set_output(0, msg)
'''


@pytest.mark.parametrize("func, ret, message", [
    ("Raise", ff.FLOW_FUNC_FAILED,
     "UDF faulty.Raise returned FLOW_FUNC_FAILED (564000); Faulty.Raise raised ValueError: bad value [7]"
     "\n  at faulty.py:9 in Raise"),
    ("RaiseUnwrapped", ff.FLOW_FUNC_FAILED,
     "UDF faulty.RaiseUnwrapped returned FLOW_FUNC_FAILED (564000); RaiseUnwrapped raised KeyError: 'k'"
     "\n  at faulty.py:12 in RaiseUnwrapped"),
    ("UserCode", 9900001, "UDF faulty.UserCode returned 9900001 (user-defined)"),
    ("OutOfRange", ff.FLOW_FUNC_FAILED,
     "UDF faulty.OutOfRange returned FLOW_FUNC_FAILED (564000); set_output: output index 3 is not an "
     "output of func 'OutOfRange'; its outputs are [0]"),
    ("NoCode", ff.FLOW_FUNC_FAILED,
     "UDF faulty.NoCode returned None, which is no FLOW_FUNC_* status code (an int)"),
    ("UnknownModel", ff.FLOW_FUNC_ERR_PARAM_INVALID,
     "UDF faulty.UnknownModel returned FLOW_FUNC_ERR_PARAM_INVALID (164000); "
     "run_flow_model('no_such_graph'): no invoked closure is registered as 'no_such_graph'; the "
     "process point has []"),
    ("FailedOutput", ff.FLOW_FUNC_ERR_TIME_OUT_ERROR,
     "UDF faulty.FailedOutput set ret code FLOW_FUNC_ERR_TIME_OUT_ERROR (564001) on output 0"),
])
def test_failures_reach_fetch_data_with_their_code_and_reason(tmp_path, func, ret, message):
    config = write_project(tmp_path, FAULTY, [{"func_name": func}], 1, 1, module="faulty", cls="Faulty")
    with dfir.load(dfir.compile(project_graph(config, 1, 1, name="faulty")).om) as model:
        model.feed_data([int32(7)])
        model.feed_data([int32(8)])
        outputs, info, got = model.fetch_data(timeout=5000)
        assert (outputs, info.transaction_id, got, got.message) == ([], 1, ret, message)
        assert model.fetch_data(timeout=5000)[1].transaction_id == 2  # the model keeps serving


def test_a_raised_exception_fails_its_transaction_when_the_graph_catches_exceptions(tmp_path):
    config = write_project(tmp_path, FAULTY, [{"func_name": "Raises"}], 1, 1, module="faulty", cls="Faulty")
    with dfir.load(dfir.compile(catching(project_graph(config, 1, 1, name="faulty"))).om) as model:
        model.feed_data([int32(7)])
        model.feed_data([int32(8)])
        outputs, info, got = model.fetch_data(timeout=5000)
        assert (outputs, info.transaction_id, got, got.message) == (
            [], 1, 9900002, "UDF faulty.Raises raised exception 9900002 (user context id 77)")
        assert model.fetch_data(timeout=5000)[1].transaction_id == 2  # the model keeps serving


def test_a_raised_exception_stops_a_graph_that_does_not_catch_exceptions(tmp_path):
    config = write_project(tmp_path, FAULTY, [{"func_name": "Raises"}], 1, 1, module="faulty", cls="Faulty")
    with dfir.load(dfir.compile(project_graph(config, 1, 1, name="faulty")).om) as model:
        model.feed_data([int32(7)])
        assert_raise_stops_a_graph_that_does_not_catch(model, 9900002, "faulty.Raises", 77)
        with pytest.raises(GeError, match=r"^feed_data failed; model=g; the model failed: the model was aborted by "):
            model.feed_data([int32(8)])


# -- init params, streams, outputs, user data ----------------------------------------------------

ATTRS = '''
import json
import numpy as np
import dfir.flow_func as ff

GETTERS = ["int", "int_list", "int_list_list", "bool", "bool_list", "float", "float_list", "str",
           "str_list", "tensor_dtype", "tensor_dtype_list"]


class Attrs:
    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        self.seen = {}
        for name in ["i", "il", "ill", "b", "bl", "f", "fl", "s", "sl", "d", "dl", "absent"]:
            self.seen[name] = [[getter] + [str(v) for v in getattr(meta_params, "get_attr_" + getter)(name)]
                               for getter in GETTERS if getattr(meta_params, "get_attr_" + getter)(name)[0] == 0]
        self.seen["facts"] = [meta_params.get_name(), meta_params.get_input_num(), meta_params.get_output_num(),
                              meta_params.get_running_device_id(), meta_params.get_running_instance_id(),
                              meta_params.get_running_instance_num(), bool(meta_params.get_work_path())]
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper()
    def Report(self, run_context, input_flow_msgs):
        text = json.dumps(self.seen, sort_keys=True).encode()
        raw = run_context.alloc_raw_data_msg(len(text))
        raw.get_raw_data()[...] = np.frombuffer(text, dtype=np.uint8)
        return run_context.set_output(0, raw)
'''


def test_every_init_param_type_reaches_its_getter(tmp_path):
    config = write_project(tmp_path, ATTRS, [{"func_name": "Report"}], 1, 1, module="attrs", cls="Attrs")
    params = {"i": 3, "il": [1, 2], "ill": [[1], [2, 3]], "b": True, "bl": [False], "f": 0.5,
              "fl": [1.5], "s": "x", "sl": ["y"], "d": dt.DT_FLOAT16, "dl": [dt.DT_INT8]}
    with dfir.load(dfir.compile(project_graph(config, 1, 1, params, name="attrs")).om) as model:
        model.feed_data([int32(0)])
        outputs, _, ret = model.fetch_data(timeout=5000)
    seen = json.loads(outputs[0].numpy().tobytes())
    assert ret == 0 and seen == {
        "i": [["int", "0", "3"]], "il": [["int_list", "0", "[1, 2]"]],
        "ill": [["int_list_list", "0", "[[1], [2, 3]]"]], "b": [["bool", "0", "True"]],
        "bl": [["bool_list", "0", "[False]"]], "f": [["float", "0", "0.5"]],
        "fl": [["float_list", "0", "[1.5]"]], "s": [["str", "0", "x"]], "sl": [["str_list", "0", "['y']"]],
        "d": [["tensor_dtype", "0", str(np.float16)]], "dl": [["tensor_dtype_list", "0", str([np.int8])]],
        "absent": [], "facts": ["attrs", 1, 1, -1, 0, 1, True]}


STREAMS = '''
import dfir.data_type as dt
import dfir.flow_func as ff


class Streams:
    @ff.proc_wrapper()
    def Pairs(self, run_context, queues):
        first, second = queues[0].get(), queues[0].get()
        out = run_context.alloc_tensor_msg(first.get_tensor().get_shape(), dt.DT_INT32)
        out.get_tensor().numpy()[...] = first.get_tensor().numpy() + second.get_tensor().numpy()
        return run_context.set_output(0, out)

    @ff.proc_wrapper()
    def Twice(self, run_context, input_flow_msgs):
        for _ in range(2):
            if run_context.set_output(0, input_flow_msgs[0]) != ff.FLOW_FUNC_SUCCESS:
                return ff.FLOW_FUNC_FAILED
        user = run_context.get_user_data(3)
        out = run_context.alloc_tensor_msg([3], dt.DT_UINT8)
        out.get_tensor().numpy()[...] = list(user)
        return run_context.set_output(1, out)
'''


def test_a_stream_input_func_reads_its_queue(tmp_path):
    config = write_project(tmp_path, STREAMS, [{"func_name": "Pairs", "stream_input": True}], 1, 1,
                           module="streams", cls="Streams")
    with dfir.load(dfir.compile(project_graph(config, 1, 1, name="pairs")).om) as model:
        for value in (1, 2, 10, 20):
            model.feed_data([int32(value)])
        results = [model.fetch_data(timeout=5000) for _ in range(2)]
    assert [(out[0].numpy().tolist(), info.transaction_id) for out, info, _ in results] == [([3], 2), ([30], 4)]


def test_outputs_come_in_the_order_they_were_set_with_the_transaction(tmp_path):
    config = write_project(tmp_path, STREAMS, [{"func_name": "Twice", "outputs_index": [0, 1]}], 1, 2,
                           module="streams", cls="Streams")
    info = FlowInfo(start_time=5, end_time=9, transaction_id=41)
    info.set_user_data(bytearray(b"abc"))
    with dfir.load(dfir.compile(project_graph(config, 1, 2, name="twice")).om) as model:
        model.feed_data([int32(6)], flow_info=info)
        both, got, ret = model.fetch_data(timeout=5000)
        again, _, _ = model.fetch_data(indexes=[0], timeout=5000)
    assert ret == 0 and (got.transaction_id, got.start_time, got.end_time) == (41, 5, 9)
    assert [t.numpy().tolist() for t in both + again] == [[6], [97, 98, 99], [6]]


# -- dfir udf new ---------------------------------------------------------------------------------

def test_a_generated_python_project_compiles_and_runs_unchanged(tmp_path, capsys):
    assert cli(["udf", "new", "scale_add", "--dir", str(tmp_path)]) == 0
    created = capsys.readouterr().out.splitlines()
    assert created[0] == f"created python UDF project {tmp_path / 'scale_add'}:"
    assert sorted(Path(line.strip()).relative_to(tmp_path).as_posix() for line in created[1:]) == [
        "scale_add/README.md", "scale_add/example.py", "scale_add/scale_add.json",
        "scale_add/src_python/scale_add.py"]
    runpy.run_path(str(tmp_path / "scale_add" / "example.py"), run_name="__main__")
    assert capsys.readouterr().out == "ret=0 out=[12, 23, 34]\n"


@pytest.mark.parametrize("argv, message", [
    (["udf", "new", "9lives"], "error: UDF project name '9lives' must start with a letter and hold only "
                               "letters, digits and '_'\n"),
    (["udf", "new", "taken"], "error: {dir}/taken already exists and is not empty; choose another name or "
                              "folder\n"),
])
def test_udf_new_refuses_bad_names_and_used_folders(tmp_path, capsys, argv, message):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    assert cli(argv + ["--dir", str(tmp_path)]) == 1
    assert capsys.readouterr().err == message.format(dir=tmp_path)


HOST_DEVICE = '''
import dfir.data_type as dt
import dfir.flow_func as ff

class Where:
    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        self.device = meta_params.get_running_device_id()
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper()
    def Device(self, run_context, input_flow_msgs):
        out = run_context.alloc_tensor_msg([1], dt.DT_INT32)
        out.get_tensor().numpy()[...] = self.device
        return run_context.set_output(0, out)
'''


@pytest.mark.parametrize("heavy_load, instances, device_ids", [
    (True, ("0:0:-1:0", "0:0:-1:0"), {-1}), (False, ("0:0:1:0", "0:0:2:0"), {1, 2})])
def test_heavy_load_places_the_udf_on_the_host_of_its_devices_server(tmp_path, heavy_load, instances, device_ids):
    config = write_project(tmp_path, HOST_DEVICE, [{"func_name": "Device"}], 1, 1, module="where", cls="Where",
                           heavy_load=heavy_load)
    deploy = tmp_path / "deploy.json"
    deploy.write_text(json.dumps({"batch_deploy_info": [{"flow_node_list": ["where"],
                                                         "logic_device_list": "0:0:1:0,0:0:2:0"}]}))
    graph = project_graph(config, 1, 1, name="where")
    graph.graph_options["ge.experiment.data_flow_deploy_info_path"] = str(deploy)
    compiled = dfir.compile(graph)
    plan = json.loads(bytes(read_om(compiled.om).models[0].partition(PartitionType.FLOW_MODEL).data))
    assert tuple(unit["device"] for unit in plan["units"] if unit["node"] == 0) == instances
    with dfir.load(compiled.om) as model:
        for value in range(4):
            model.feed_data([int32(value)])
        assert {int(model.fetch_data(timeout=5000)[0][0].numpy()[0]) for _ in range(4)} == device_ids
