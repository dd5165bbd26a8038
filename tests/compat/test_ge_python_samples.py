"""GE's Python DataFlow samples (`examples/dflow/python`), one test each: a script of our own making
the sample's calls (`import dataflow as df`, the same process points, options, feeds and fetches)
runs unchanged under `dfir exec` and gives the results GE documents.

The scripts, UDFs (C++ and Python), compile configs, deploy infos and models are written here, laid
out as GE's sample folder is: `python/` (the working folder, with `config/` and `udf_py/`) beside
`udf_workspace/` (the C++ UDF projects, which the configs name as `../udf_workspace`).
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dfir.flow_func import FLOW_FUNC_ERR_DATA_ALIGN_FAILED
from tensorflow_helpers import ADD, write_frozen_graph

EXEC_TIMEOUT_S = 600


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def write_json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def dfir_exec(tree: Path, name: str, script: str) -> list:
    """Write `python/<name>.py`, run it with `dfir exec` in `python/`; the values it printed
    on `RESULT <json>` lines."""
    path = write(tree / "python" / f"{name}.py", script)
    run = subprocess.run([sys.executable, "-m", "dfir.tools.cli", "exec", path.name], cwd=path.parent,
                         capture_output=True, text=True, timeout=EXEC_TIMEOUT_S)
    assert run.returncode == 0, f"{name} exited with {run.returncode}:\n{run.stdout}\n{run.stderr}"
    return [json.loads(line[len("RESULT "):]) for line in run.stdout.splitlines() if line.startswith("RESULT ")]


# --- the sample folder ---------------------------------------------------------------------------

CMAKELISTS = """
    cmake_minimum_required(VERSION 3.14)
    project(sample_udf CXX)
    set(CMAKE_CXX_STANDARD 17)
    set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/${RELEASE_DIR})
    add_library(${UDF_TARGET_LIB} SHARED ${SOURCE})
    target_include_directories(${UDF_TARGET_LIB} PRIVATE $ENV{ASCEND_HOME_PATH}/include)
"""

ADD_UDF = """
    // Adds its two int32 inputs; raises exception -101 for transaction 1 when asked to.
    #include <cstdint>
    #include <memory>
    #include <vector>
    #include "flow_func/flow_func_log.h"
    #include "flow_func/meta_flow_func.h"

    namespace FlowFunc {
    class SumOfTwo : public MetaFlowFunc {
     public:
      int32_t Init() override {
        if (context_->GetAttr("out_type", outType_) != FLOW_FUNC_SUCCESS) {
          outType_ = TensorDataType::DT_INT32;
        }
        (void)context_->GetAttr("enableExceptionCatch", raiseForTest_);
        return FLOW_FUNC_SUCCESS;
      }

      int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>> &inputs) override {
        int32_t code = 0;
        uint64_t userContext = 0;
        if (context_->GetException(code, userContext)) {
          return FLOW_FUNC_SUCCESS;
        }
        if (raiseForTest_ && inputs[0]->GetTransactionId() == 1) {
          context_->RaiseException(-101, 1);
        }
        const Tensor *left = inputs[0]->GetTensor();
        const Tensor *right = inputs[1]->GetTensor();
        auto out = context_->AllocTensorMsg(left->GetShape(), outType_);
        const auto *a = static_cast<const int32_t *>(left->GetData());
        const auto *b = static_cast<const int32_t *>(right->GetData());
        auto *sum = static_cast<int32_t *>(out->GetTensor()->GetData());
        for (int64_t i = 0; i < left->GetElementCnt(); ++i) {
          sum[i] = a[i] + b[i];
        }
        return context_->SetOutput(0, out);
      }

     private:
      TensorDataType outType_ = TensorDataType::DT_INT32;
      bool raiseForTest_ = false;
    };
    REGISTER_FLOW_FUNC("Add", SumOfTwo);
    }  // namespace FlowFunc
"""

CALL_NN_UDF = """
    // Runs the invoked graph "invoke_graph" on its inputs; raises exception -100 for transaction 3
    // when asked to.
    #include <cstdint>
    #include <memory>
    #include <vector>
    #include "flow_func/meta_flow_func.h"

    namespace FlowFunc {
    class GraphCaller : public MetaFlowFunc {
     public:
      int32_t Init() override {
        (void)context_->GetAttr("enableExceptionCatch", raiseForTest_);
        return FLOW_FUNC_SUCCESS;
      }

      int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>> &inputs) override {
        int32_t code = 0;
        uint64_t userContext = 0;
        if (context_->GetException(code, userContext)) {
          return FLOW_FUNC_SUCCESS;
        }
        if (raiseForTest_ && inputs[0]->GetTransactionId() == 3) {
          context_->RaiseException(-100, 3);
        }
        std::vector<std::shared_ptr<FlowMsg>> outputs;
        int32_t ret = context_->RunFlowModel("invoke_graph", inputs, outputs, 100000);
        if (ret != FLOW_FUNC_SUCCESS) {
          return ret;
        }
        for (size_t i = 0; i < outputs.size(); ++i) {
          ret = context_->SetOutput(static_cast<uint32_t>(i), outputs[i]);
          if (ret != FLOW_FUNC_SUCCESS) {
            return ret;
          }
        }
        return FLOW_FUNC_SUCCESS;
      }

     private:
      bool raiseForTest_ = false;
    };
    REGISTER_FLOW_FUNC("call_nn", GraphCaller);
    }  // namespace FlowFunc
"""

UDF_ADD_PY = """
    import dataflow.data_type as dt
    import dataflow.flow_func as ff


    def _tensors(msgs):
        return [msg.get_tensor().numpy() for msg in msgs]


    class PairAdder:
        \"\"\"Two funcs: out0 = in0 + in2, out1 = in1 + 2 * in3.\"\"\"

        @ff.init_wrapper()
        def init_flow_func(self, meta_params):
            return ff.FLOW_FUNC_SUCCESS

        @ff.proc_wrapper("i0,i2,o0")
        def add_first(self, run_context, input_flow_msgs):
            a, b = _tensors(input_flow_msgs)
            out = run_context.alloc_tensor_msg(a.shape, dt.DT_INT32)
            out.get_tensor().numpy()[...] = a + b
            return run_context.set_output(0, out)

        @ff.proc_wrapper("i1,i3,o1")
        def add_second(self, run_context, input_flow_msgs):
            a, b = _tensors(input_flow_msgs)
            out = run_context.alloc_tensor_msg(a.shape, dt.DT_INT32)
            out.get_tensor().numpy()[...] = a + 2 * b
            return run_context.set_output(1, out)
"""

UDF_CONTROL_PY = """
    import dataflow.data_type as dt
    import dataflow.flow_func as ff


    class Router:
        \"\"\"Feeds [1, 2, 3] and [1, 1, 1] to outputs 0 and 2 for input 0, to 1 and 3 otherwise.\"\"\"

        @ff.init_wrapper()
        def init_flow_func(self, meta_params):
            return ff.FLOW_FUNC_SUCCESS

        @ff.proc_wrapper("i0,o0,o1,o2,o3")
        def route(self, run_context, input_flow_msgs):
            which = int(input_flow_msgs[0].get_tensor().numpy()[0])
            first = run_context.alloc_tensor_msg([3], dt.DT_INT32)
            second = run_context.alloc_tensor_msg([3], dt.DT_INT32)
            first.get_tensor().numpy()[...] = [1, 2, 3]
            second.get_tensor().numpy()[...] = [1, 1, 1] if which == 0 else [1, 2, 3]
            if run_context.set_output(which, first) != ff.FLOW_FUNC_SUCCESS:
                return ff.FLOW_FUNC_FAILED
            return run_context.set_output(which + 2, second)
"""


def write_add_onnx(path: Path) -> None:
    """GE's `simple_model.onnx`: X1 + X2, int32 [3], opset 11."""
    import onnx
    from onnx import TensorProto, helper

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT32, [3]) for n in ("X1", "X2")]
    output = helper.make_tensor_value_info("Y", TensorProto.INT32, [3])
    graph = helper.make_graph([helper.make_node("Add", ["X1", "X2"], ["Y"])], "simple_add_model", inputs, [output])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), str(path))


def deploy_info(groups: list[tuple[list[str], str]], dynamic: bool = True) -> dict:
    info = {"batch_deploy_info": [{"flow_node_list": nodes, "logic_device_list": devices}
                                  for nodes, devices in groups]}
    return {"dynamic_schedule_enable": True, **info} if dynamic else info


@pytest.fixture(scope="module")
def sample_tree(tmp_path_factory) -> Path:
    """GE's sample folder, our own files: python/{config,udf_py} and udf_workspace/."""
    tree = tmp_path_factory.mktemp("dflow")
    for project, source, text in (("01_udf_add", "add.cpp", ADD_UDF), ("02_udf_call_add_nn", "call_nn.cpp", CALL_NN_UDF)):
        write(tree / "udf_workspace" / project / source, text)
        write(tree / "udf_workspace" / project / "CMakeLists.txt", CMAKELISTS.replace("${SOURCE}", source))
    config = tree / "python" / "config"
    for name, func, lib, project in (("add_func", "Add", "libadd.so", "01_udf_add"),
                                     ("invoke_func", "call_nn", "libudf.so", "02_udf_call_add_nn")):
        write_json(config / f"{name}.json", {"func_list": [{"func_name": func}], "input_num": 2, "output_num": 1,
                                             "target_bin": lib, "workspace": "../udf_workspace",
                                             "cmakelist_path": f"{project}/CMakeLists.txt"})
    write_json(config / "add_graph.json", {"build_options": {}, "inputs_tensor_desc": [
        {"data_type": "DT_INT32", "shape": [3]}, {"data_type": "DT_INT32", "shape": [3]}]})
    write_json(config / "data_flow_deploy_info.json", deploy_info([(["FlowNode"], "0:0:0:0"),
                                                                   (["FlowNode_1"], "0:0:0:0")]))
    write_json(config / "multi_model_deploy.json", deploy_info([
        (["onnx_node"], "0:0:0:0"), (["conv_model"], "0:0:2:0"), (["matmul_model"], "0:0:3:0"),
        (["pb_node"], "0:0:3:0"), (["convert_data0", "convert_data1"], "0:0:4:0")]))
    write_json(config / "sample_pytorch_deploy_info.json", deploy_info(
        [(["preprocess_fnode", "Model1Runner_fnode", "Model2Runner_fnode", "postprocess_fnode"], "0:0:0:0")],
        dynamic=False))
    write_json(config / "sample_npu_model_deploy_info.json", deploy_info(
        [(["preprocess_fnode", "FakeModel1_fnode", "FakeModel2_fnode", "postprocess_fnode"], "0:0:0:0")],
        dynamic=False))
    write_add_onnx(config / "simple_model.onnx")
    write(tree / "python" / "udf_py" / "udf_add.py", UDF_ADD_PY)
    write(tree / "python" / "udf_py" / "udf_control.py", UDF_CONTROL_PY)
    return tree


@pytest.fixture(scope="module")
def tf_tree(sample_tree) -> Path:
    """The sample folder with `config/add.pb` (needs tensorflow, as GE's model generator does)."""
    write_frozen_graph(sample_tree / "python" / "config" / "add.pb", ADD)
    return sample_tree


# --- the samples ---------------------------------------------------------------------------------

OPTIONS = """
    options = {
        "ge.exec.deviceId": "0",
        "ge.exec.logicalDeviceClusterDeployMode": "SINGLE",
        "ge.exec.logicalDeviceId": "[0:0]",
    }
    df.init(options)
"""

BASE_GRAPH = """
    data0 = df.FlowData()
    data1 = df.FlowData()

    pp0 = df.FuncProcessPoint(compile_config_path="config/add_func.json")
    pp0.set_init_param("out_type", df.DT_INT32)
    {catch_add}
    flow_node0 = df.FlowNode(input_num=2, output_num=1)
    flow_node0.add_process_point(pp0)
    flow_node0.set_attr("_flow_attr", True)
    flow_node0.set_attr("_flow_attr_depth", 108)
    flow_node0.set_attr("_flow_attr_enqueue_policy", "FIFO")

    pp1 = df.FuncProcessPoint(compile_config_path="config/invoke_func.json")
    {catch_call}
    pp2 = df.GraphProcessPoint(df.Framework.TENSORFLOW, "config/add.pb",
                               load_params={{"input_data_names": "Placeholder,Placeholder_1"}},
                               compile_config_path="config/add_graph.json")
    pp1.add_invoked_closure("invoke_graph", pp2)
    flow_node1 = df.FlowNode(input_num=2, output_num=1)
    flow_node1.add_process_point(pp1)

    pp3 = df.GraphProcessPoint(df.Framework.TENSORFLOW, "config/add.pb",
                               load_params={{"input_data_names": "Placeholder,Placeholder_1"}},
                               compile_config_path="config/add_graph.json")
    flow_node2 = df.FlowNode(input_num=2, output_num=1)
    flow_node2.add_process_point(pp3)
"""


def result_json(name: str = "result") -> str:
    """A script line printing a (tensors..., ret) fetch result as `RESULT <json>`."""
    return (f"print('RESULT', json.dumps([[t.numpy().tolist() for t in {name}[0]], "
            f"str({name}[0][0].numpy().dtype) if {name}[0] else None, int({name}[-1])]))")


def test_sample_base(tf_tree):
    script = ("import json\nimport dataflow as df\nimport numpy as np\n" + textwrap.dedent(OPTIONS)
              + textwrap.dedent(BASE_GRAPH).format(catch_add="", catch_call="") + textwrap.dedent("""
        time_batch = df.TimeBatch()
        time_batch.time_window = 5
        time_batch.batch_dim = 0
        flow_node2.map_input(0, pp3, 0, [time_batch])
        flow_node2.map_input(1, pp3, 1)

        flow_node0_out = flow_node0(data0, data1)
        flow_node1_out = flow_node1(data0, data1)
        flow_node2_out = flow_node2(flow_node0_out, flow_node1_out)
        dag = df.FlowGraph([flow_node2_out])

        flow_info = df.FlowInfo()
        flow_info.start_time = 0
        flow_info.end_time = 5
        dag.feed_data({data0: np.ones([3], dtype=np.int32), data1: np.array([1, 2, 3], dtype=np.int32)}, flow_info)
        result = dag.fetch_data()
        """) + result_json() + "\ndf.finalize()\n")
    assert dfir_exec(tf_tree, "sample_base", script) == [[[[4, 6, 8]], "int32", 0]]


def test_sample_exception(tf_tree):
    script = ("import json\nimport dataflow as df\nimport numpy as np\n" + textwrap.dedent(OPTIONS)
              + textwrap.dedent(BASE_GRAPH).format(catch_add='pp0.set_init_param("enableExceptionCatch", True)',
                                                   catch_call='pp1.set_init_param("enableExceptionCatch", True)')
              + textwrap.dedent("""
        flow_node0_out = flow_node0(data0, data1)
        flow_node1_out = flow_node1(data0, data1)
        flow_node2_out = flow_node2(flow_node0_out, flow_node1_out)
        dag = df.FlowGraph([flow_node2_out])
        dag.set_inputs_align_attrs(100, 1000, False)
        dag.set_exception_catch(True)

        flow_info = df.FlowInfo()
        flow_info.start_time = 0
        flow_info.end_time = 5
        for i in range(10):
            dag.feed_data({data0: np.ones([3], dtype=np.int32), data1: np.array([1, 2, 3], dtype=np.int32)},
                          flow_info)
        for i in range(10):
            result = dag.fetch_data()
            print("RESULT", json.dumps([result[1].transaction_id, int(result[-1]),
                                        [t.numpy().tolist() for t in result[0]]]))
        df.finalize()
        """))
    results = {transaction: (ret, values) for transaction, ret, values in dfir_exec(tf_tree, "sample_exception", script)}
    assert sorted(results) == list(range(1, 11))
    # Transactions 1 and 3: the adder raised -101, the graph caller -100. A UDF that runs after the
    # other raised sees the exception and gives no output, so the last node's inputs never align and
    # the 1000 ms timeout of set_inputs_align_attrs ends the transaction; else the code is fetched.
    for transaction, code in ((1, -101), (3, -100)):
        assert results[transaction] in ((code, []), (FLOW_FUNC_ERR_DATA_ALIGN_FAILED, []))
    assert all(results[t] == (0, [[4, 6, 8]]) for t in results if t not in (1, 3))


def test_sample_multiple_model(tf_tree):
    pytest.importorskip("torch")
    script = textwrap.dedent("""
        import json
        import dataflow as df
        import numpy as np
        import torch
        import torch.nn as nn


        class ConvNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.Sequential(nn.Conv2d(3, 3, kernel_size=3, stride=1, padding=1), nn.ReLU())

            def forward(self, x):
                return self.layers(x)


        @df.pyflow()
        class ConvFunc:
            def __init__(self):
                self.model = ConvNet().eval()

            @df.method(num_returns=1)
            @torch.inference_mode()
            def compute(self, data):
                return torch.mean(data.to(torch.float), dim=(0, 2, 3))


        @df.pyflow()
        class MatmulFunc:
            def __init__(self):
                self.model = nn.Linear(32, 32).eval()

            @df.method(num_returns=1)
            @torch.inference_mode()
            def compute(self, data):
                return torch.mean(data.to(torch.float), dim=(0, 2, 3))


        @df.pyflow(num_returns=1)
        def convert_data(data):
            return df.Tensor(data.numpy().astype(np.int32))


        def main():
            df.init({"ge.exec.deviceId": "0",
                     "ge.experiment.data_flow_deploy_info_path": "./config/multi_model_deploy.json"})
            data0, data1, data2 = df.FlowData(), df.FlowData(), df.FlowData()
            conv_node = ConvFunc.fnode().set_alias("conv_model")
            matmul_node = MatmulFunc.fnode().set_alias("matmul_model")
            onnx_pp = df.GraphProcessPoint(df.Framework.ONNX, "config/simple_model.onnx",
                                           load_params={"input_data_names": "X1,X2"},
                                           compile_config_path="config/add_graph.json")
            onnx_node = df.FlowNode(input_num=2, output_num=1, name="onnx_node")
            onnx_node.add_process_point(onnx_pp)
            pb_pp = df.GraphProcessPoint(df.Framework.TENSORFLOW, "config/add.pb",
                                         load_params={"input_data_names": "Placeholder,Placeholder_1"},
                                         compile_config_path="config/add_graph.json")
            pb_node = df.FlowNode(input_num=2, output_num=1, name="pb_node")
            pb_node.add_process_point(pb_pp)
            converted0 = convert_data.fnode().set_alias("convert_data0")(conv_node(data0))
            converted1 = convert_data.fnode().set_alias("convert_data1")(matmul_node(data1))
            graph = df.FlowGraph([pb_node(onnx_node(converted0, converted1), data2)])

            first = torch.randint(0, 101, (1, 3, 32, 32), dtype=torch.int32)
            second = torch.randint(0, 101, (1, 3, 32, 32), dtype=torch.int32)
            graph.feed({data0: first, data1: second, data2: df.Tensor(np.ones([3], dtype=np.int32))}, timeout=-1)
            outputs, ret = graph.fetch(indexes=None, timeout=1000 * 6 * 5)
            means = [torch.mean(t.to(torch.float), dim=(0, 2, 3)).numpy().astype(np.int32) for t in (first, second)]
            print("RESULT", json.dumps([outputs[0].numpy().tolist(), str(outputs[0].numpy().dtype), int(ret),
                                        (means[0] + means[1] + 1).tolist()]))
            df.finalize()


        if __name__ == "__main__":
            main()
    """)
    [[values, dtype, ret, expected]] = dfir_exec(tf_tree, "sample_multiple_model", script)
    assert (values, dtype, ret) == (expected, "int32", 0)


def test_sample_perf(sample_tree):
    script = "import json\nimport time\nimport dataflow as df\n" + textwrap.dedent(OPTIONS) + textwrap.dedent("""
        data0 = df.FlowData()
        data1 = df.FlowData()
        pp0 = df.FuncProcessPoint(compile_config_path="config/add_func.json")
        pp0.set_init_param("out_type", df.DT_INT32)
        flow_node0 = df.FlowNode(input_num=2, output_num=1)
        flow_node0.add_process_point(pp0)
        dag = df.FlowGraph([flow_node0(data0, data1)])

        feed_data = df.Tensor([4, 7, 5], tensor_desc=df.TensorDesc(df.DT_INT32, [3]))
        flow_info = df.FlowInfo()
        fed = [dag.feed_data({data0: feed_data, data1: feed_data}, flow_info) for _ in range(3)]
        start = time.time()
        fed += [dag.feed_data({data0: feed_data, data1: feed_data}, flow_info) for _ in range(10)]
        print(f"TEST-TIME: feed cost {(time.time() - start) * 1000000} us")
        first = dag.fetch_data()
        print("RESULT", json.dumps([[int(r) for r in fed], first[0][0].numpy().tolist(), int(first[-1])]))
        print("TEST SUCCESS")
        df.finalize()
    """)
    assert dfir_exec(sample_tree, "sample_perf", script) == [[[0] * 13, [8, 14, 10], 0]]


PYTORCH_PIPELINE = """
    import json
    import dataflow as df
    import torch
    import torch.nn.functional as F
    import torchvision.transforms as transforms
    from torch import nn


    def crop(image):
        return transforms.Compose([transforms.CenterCrop(512)])(image)


    def shrink(image):
        return F.interpolate(image, size=(256, 256), mode="bilinear")


    def normalize(image):
        return (image - 0.5) / 0.5


    def restore(image):
        return F.interpolate(image * 0.5 + 0.5, size=(512, 512), mode="bilinear")
"""


def pytorch_main(deploy_info: str, names: tuple[str, str], call: str) -> str:
    first, second = names
    return textwrap.dedent(f"""
        if __name__ == "__main__":
            df.init({{"ge.experiment.data_flow_deploy_info_path": "./config/{deploy_info}"}})
            data0 = df.FlowData()
            preprocess_node = preprocess.fnode()
            model1_node = {first}.fnode()
            model2_node = {second}.fnode()
            postprocess_node = postprocess.fnode()
            output = postprocess_node(model2_node.{call}(model1_node.{call}(preprocess_node(data0))))
            dag = df.FlowGraph([output])
            image = torch.randn(1, 3, 768, 768)
            dag.feed({{data0: image}})
            outputs, ret = dag.fetch()
            expected = restore(normalize(shrink(crop(image))))
            got = outputs[0]
            print("RESULT", json.dumps([type(got).__name__, list(got.shape), int(ret),
                                        bool(torch.allclose(torch.as_tensor(got), expected, atol=1e-5))]))
            df.finalize()
    """)


def test_sample_pytorch(sample_tree):
    pytest.importorskip("torchvision")
    script = textwrap.dedent(PYTORCH_PIPELINE) + textwrap.dedent("""

        class FakeModel1(nn.Module):
            def forward(self, input_image):
                return shrink(input_image)


        class FakeModel2(nn.Module):
            def forward(self, input_image):
                return normalize(input_image)


        @df.pyflow
        def preprocess(input_image):
            return crop(input_image)


        @df.pyflow
        class Model1Runner:
            def __init__(self):
                self.model = FakeModel1()

            @df.method()
            def run(self, input_image):
                return self.model(input_image)


        @df.pyflow
        class Model2Runner:
            def __init__(self):
                self.model = FakeModel2()

            @df.method()
            def run(self, input_image):
                return self.model(input_image)


        @df.pyflow
        def postprocess(input_image):
            return restore(input_image)
    """) + pytorch_main("sample_pytorch_deploy_info.json", ("Model1Runner", "Model2Runner"), "run")
    assert dfir_exec(sample_tree, "sample_pytorch", script) == [["Tensor", [1, 3, 512, 512], 0, True]]


def test_sample_npu_model(sample_tree):
    pytest.importorskip("torchvision")
    script = textwrap.dedent(PYTORCH_PIPELINE) + textwrap.dedent("""

        @df.npu_model(optimize_level=1)
        class FakeModel1(nn.Module):
            @df.method()
            def forward(self, input_image):
                return shrink(input_image)


        @df.npu_model(optimize_level=2, input_descs=[df.TensorDesc(dtype=df.DT_FLOAT, shape=[1, 3, 256, 256])])
        class FakeModel2(nn.Module):
            @df.method()
            def forward(self, input_image):
                return normalize(input_image)


        @df.npu_model()
        def preprocess(input_image):
            return crop(input_image)


        @df.npu_model()
        def postprocess(input_image):
            return restore(input_image)
    """) + pytorch_main("sample_npu_model_deploy_info.json", ("FakeModel1", "FakeModel2"), "forward")
    assert dfir_exec(sample_tree, "sample_npu_model", script) == [["Tensor", [1, 3, 512, 512], 0, True]]


def test_sample_udf_python(sample_tree):
    script = textwrap.dedent("""
        import json
        import dataflow as df
        import numpy as np
        from udf_py.udf_add import PairAdder
        from udf_py.udf_control import Router

        df.init({"ge.exec.deviceId": "0",
                 "ge.experiment.data_flow_deploy_info_path": "./config/data_flow_deploy_info.json"})
        data0 = df.FlowData()
        pp0 = df.FuncProcessPoint(py_func=Router, workspace_dir="./py_add_ws")
        flow_node0 = df.FlowNode(input_num=1, output_num=4)
        flow_node0.add_process_point(pp0)
        pp1 = df.FuncProcessPoint(py_func=PairAdder, workspace_dir="./py_add_ws")
        flow_node1 = df.FlowNode(input_num=4, output_num=2)
        flow_node1.add_process_point(pp1)
        out0, out1 = flow_node1(*flow_node0(data0))
        dag = df.FlowGraph([out0, out1])

        flow_info = df.FlowInfo()
        flow_info.start_time = 0
        flow_info.end_time = 5
        dag.feed_data({data0: np.array([0], dtype=np.int32)}, flow_info)
        result = dag.fetch_data([0])
        print("RESULT", json.dumps([result[0][0].numpy().tolist(), result[1].end_time, int(result[-1])]))
        dag.feed_data({data0: np.array([1], dtype=np.int32)}, flow_info)
        result = dag.fetch_data([1])
        print("RESULT", json.dumps([result[0][0].numpy().tolist(), result[1].end_time, int(result[-1])]))
        df.finalize()
    """)
    assert dfir_exec(sample_tree, "sample_udf_python", script) == [[[2, 3, 4], 5, 0], [[3, 6, 9], 5, 0]]
