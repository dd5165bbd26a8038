"""`dfir inspect` (the report of an .om) and the `dfir` command line around it."""
from __future__ import annotations

import hashlib
import json
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dfir.ge.error import GeError
from dfir.lowering.om_writer import write_bundle, write_om
from dfir.om.schema import HEADER_SIZE, PartitionType, align_up
from dfir.tools.cli import find_graph, main, parse_options
from dfir.tools.inspect_om import inspect_om
from dfir.tools.scripts import no_graph_message

PLAN = {
    "format": 1,
    "name": "pipeline",
    "inputs": [{"name": "FlowData", "index": 0, "dtype": "DT_INT32", "shape": [1, 2]},
               {"name": "FlowData_1", "index": 1, "dtype": None, "shape": None}],
    "outputs": [{"node": 1, "port": 0}, {"node": 0, "port": 1}],
    "nodes": [
        {"name": "Add_fnode", "alias": None, "loc": "examples/add.py:12", "input_num": 2, "output_num": 2,
         "inputs": [{"data": 0}, {"data": 1}], "device": "-1", "attrs": {},
         "pp": {"kind": "py_udf", "udf": 0,
                "funcs": [{"name": "add", "inputs": [0, 1], "outputs": [0], "stream_input": False},
                          {"name": "sub", "inputs": [0, 1], "outputs": [1], "stream_input": False}]}},
        {"name": "mlp_node", "alias": "mlp", "loc": "examples/mlp.py:30", "input_num": 1, "output_num": 1,
         "inputs": [{"node": 0, "port": 0}], "device": "0:0:0:0", "attrs": {},
         "pp": {"kind": "ge_graph", "graph": 0}},
    ],
    "order": [0, 1],
    "udfs": [{"partition": 0, "sha256": "0" * 64, "size": 0}],
    "ge_graphs": [{"name": "mlp", "inputs": [], "ops": [], "outputs": [], "weights": []}],
}


class _Trap:
    """Unpickling this creates the file at `path`: proof that a report unpickled a payload."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def canonical(plan) -> bytes:
    return json.dumps(plan, sort_keys=True, separators=(",", ":")).encode()


def plan_om(plan: dict | bytes, payload: bytes = b"payload") -> bytes:
    plan_bytes = plan if isinstance(plan, bytes) else canonical(plan)
    return write_om([[(PartitionType.FLOW_MODEL, plan_bytes), (PartitionType.UDF_PAYLOAD, payload),
                      (PartitionType.WEIGHTS_DATA, np.zeros(16, np.float32).tobytes())]],
                    name="pipeline", ops=2, platform_version="Ascend910B")


def digests(om: bytes) -> str:
    header = bytearray(om[:HEADER_SIZE])
    header[44:76] = bytes(32)  # checksum[32:64] holds the digest of the header with itself zeroed
    return (f"content=sha256:{hashlib.sha256(om[HEADER_SIZE:]).hexdigest()} "
            f"header=sha256:{hashlib.sha256(header).hexdigest()}")


def expected_header(om: bytes, *, modeltype: str, name: str, model_num: int, ops: int, platform: str,
                    indent: str = "") -> str:
    """The header lines of the report, and for the file itself (not a bundle member) its
    signature line."""
    length = len(om) - HEADER_SIZE
    lines = ["header", "  magic 0x444F4D49", "  headsize 256", "  version 0x20000000",
             f"  checksum {digests(om)}", f"  length {length}", "  is_encrypt 0", "  is_checksum 1",
             f"  modeltype {modeltype}", "  genmode 0", f'  name "{name}"', f"  ops {ops}",
             f"  userdefineinfo {'00' * 32}", "  om_ir_version 1", f"  model_num {model_num}",
             f'  platform_version "{platform}"', "  platform_type 0", f"  model_length {length}",
             "  need_check_os_cpu_info 0", "  is_unknow_model 0"] + ([] if indent else ["signature unsigned"])
    return "".join(f"{indent}{line}\n" for line in lines)


def test_report_lists_header_partitions_and_plan():
    om = plan_om(PLAN)
    udf_offset = align_up(384 + len(canonical(PLAN)))  # the plan starts right after the 4-entry table
    assert inspect_om(om) == expected_header(om, modeltype="3 FLOW", name="pipeline", model_num=1, ops=2,
                                             platform="Ascend910B") + textwrap.dedent("""\
        model 0
          partition 0 FLOW_MODEL offset=384 size={plan_size}
          partition 1 UDF_PAYLOAD offset={udf_offset} size=7
          partition 2 WEIGHTS_DATA offset={weights_offset} size=64
          partition 3 PARTITION_CHECKSUMS offset={checksums_offset} size=96
          plan "pipeline" format=1
            input 0 "FlowData" dtype="DT_INT32" shape=[1,2]
            input 1 "FlowData_1" dtype=null shape=null
            output 0 node=1 port=0
            output 1 node=0 port=1
            node 0 "Add_fnode" pp=py_udf device="-1" inputs=[data:0,data:1] udf=0 funcs=[add,sub]
            node 1 "mlp_node" pp=ge_graph device="0:0:0:0" inputs=[node:0.0] graph=0
            order [0,1]
            ge_graph 0 "mlp" backend=reference
        """).format(plan_size=len(canonical(PLAN)), udf_offset=udf_offset, weights_offset=udf_offset + 64,
                    checksums_offset=udf_offset + 128)


def format_2(plan: dict, instances: list[list[str]]) -> dict:
    """`plan` (format 1) in format 2, node n running one instance on each of `instances[n]`."""
    nodes = [{key: value for key, value in node.items() if key not in ("device", "instances")}
             for node in plan["nodes"]]
    units = [{"node": n, "instance": k, "device": device}
             for n, devices in enumerate(instances) for k, device in enumerate(devices)]
    return {**plan, "format": 2, "nodes": nodes, "units": units}


def test_report_shows_the_devices_of_a_replicated_nodes_units():
    report = inspect_om(plan_om(format_2(PLAN, [["-1"], ["0:0:0:0", "0:0:1:0"]])))
    assert 'plan "pipeline" format=2\n' in report
    assert ('node 0 "Add_fnode" pp=py_udf device="-1" inputs=[data:0,data:1] udf=0 funcs=[add,sub]\n'
            '    node 1 "mlp_node" pp=ge_graph device="0:0:0:0" inputs=[node:0.0] instances=["0:0:0:0","0:0:1:0"] '
            'graph=0\n') in report
    bad = format_2(PLAN, [["-1"], ["0:0:0:0"]])
    bad["units"][1]["node"] = 2
    with pytest.raises(GeError) as caught:
        inspect_om(plan_om(bad))
    assert caught.value.error_message == ("model 0 execution plan: units[1].node is not an index of the 2 nodes, "
                                          "got 2")


def test_report_is_the_same_from_a_path_and_never_unpickles_payloads(tmp_path):
    trap_file = tmp_path / "unpickled"
    om = plan_om(PLAN, payload=pickle.dumps(_Trap(str(trap_file))))
    path = tmp_path / "model.om"
    path.write_bytes(om)
    assert inspect_om(path) == inspect_om(om)
    assert not trap_file.exists()


def test_a_model_without_plan_says_so():
    om = write_om([[(PartitionType.IR_TEXT, b"builtin.module {}")]], name="bare")
    assert inspect_om(om).endswith("model 0\n"
                                   "  partition 0 IR_TEXT offset=320 size=17\n"
                                   "  partition 1 PARTITION_CHECKSUMS offset=384 size=32\n"
                                   "  plan none\n")


def test_bundle_members_are_reported_indented_under_their_name():
    member = plan_om(PLAN)
    bundle = write_bundle([member], ["infer"], var_size=128, name="set")
    report = inspect_om(bundle)
    nested = bundle[384:]
    assert report.startswith(expected_header(bundle, modeltype="5 BUNDLE", name="set", model_num=1, ops=0,
                                             platform="") + textwrap.dedent(f"""\
        var_size 128
        bundle table
          partition 0 BUNDLE_MODEL_VAR_INFO offset=320 size=8
          partition 1 BUNDLE_MODEL_INFO offset=384 size={len(member)}
        bundle model 0 "infer"
        """) + expected_header(nested, modeltype="3 FLOW", name="infer", model_num=1, ops=2,
                               platform="Ascend910B", indent="  ") + "  model 0\n")
    assert report.endswith('    node 1 "mlp_node" pp=ge_graph device="0:0:0:0" inputs=[node:0.0] graph=0\n'
                           "      order [0,1]\n"
                           '      ge_graph 0 "mlp" backend=reference\n')


@pytest.mark.parametrize("plan, message", [
    (b"{not json", "model 0: the FLOW_MODEL partition is not a JSON execution plan "
                   "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
    ({**PLAN, "nodes": [{**PLAN["nodes"][0], "pp": {"udf": 0}}]},
     "model 0 execution plan: nodes[0].pp has no key 'kind', got {\"udf\":0}"),
    ({**PLAN, "outputs": [{"node": "1", "port": 0}]},
     "model 0 execution plan: outputs[0].node must be an integer, got \"1\""),
    ({**PLAN, "inputs": {}}, "model 0 execution plan: inputs must be a list, got {}"),
    ([], "model 0 execution plan: the plan must be an object, got []"),
])
def test_a_malformed_plan_is_a_ge_error_naming_its_json_path(plan, message):
    with pytest.raises(GeError) as caught:
        inspect_om(plan_om(plan))
    assert str(caught.value) == message


# ---------------------------------------------------------------- the dfir command


def test_dfir_inspect_prints_the_report(tmp_path, capsys):
    path = tmp_path / "model.om"
    path.write_bytes(plan_om(PLAN))
    assert main(["inspect", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == inspect_om(path) and captured.err == ""


def test_dfir_inspect_on_a_corrupt_file_prints_error_and_exits_1(tmp_path, capsys):
    om = bytearray(plan_om(PLAN))
    om[-1] ^= 0xFF
    path = tmp_path / "corrupt.om"
    path.write_bytes(om)
    assert main(["inspect", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    # the last byte belongs to PARTITION_CHECKSUMS: the digest it recorded for WEIGHTS_DATA no longer matches
    assert captured.err.startswith(
        f"error: file={path}; partition 2 (WEIGHTS_DATA) of model 0 checksum mismatch: ")


def test_dfir_command_reports_errors_without_a_traceback(tmp_path):
    path = tmp_path / "short.om"
    path.write_bytes(b"DOMI")
    # Run outside the checkout so the installed package is imported, not the source folder.
    result = subprocess.run([sys.executable, "-m", "dfir.tools.cli", "inspect", str(path)],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"error: file={path}; file has 4 bytes, shorter than the 256-byte header\n"


def test_dfir_inspect_on_a_missing_file(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "none.om")]) == 1
    assert capsys.readouterr().err == (
        f"error: file={tmp_path / 'none.om'}; cannot open the file: No such file or directory\n")


class _GraphA:
    pass


class _GraphB:
    pass


def test_find_graph_takes_the_only_graph_or_the_named_one():
    only, other = _GraphA(), _GraphB()
    assert find_graph({"g": only, "x": 1}, None, (_GraphA, _GraphB)) is only
    assert find_graph({"g": only, "h": other}, "h", (_GraphA, _GraphB)) is other
    with pytest.raises(GeError, match=r"^the script defines no _GraphA or _GraphB among its globals$"):
        find_graph({"x": 1, "_GraphA": _GraphA}, None, (_GraphA, _GraphB))
    with pytest.raises(GeError, match=r"^the script defines 2 graphs \(g, h\); choose one with --graph NAME$"):
        find_graph({"h": other, "g": only}, None, (_GraphA, _GraphB))
    with pytest.raises(GeError, match=r"^the script has no _GraphA or _GraphB named 'k'; it defines g, h$"):
        find_graph({"h": other, "g": only}, "k", (_GraphA, _GraphB))


def test_options_are_key_value_pairs():
    assert parse_options(["ge.graph_key=demo", "ge.runFlag=0", "ge.inputShape=x:1,2;y:3"]) == {
        "ge.graph_key": "demo", "ge.runFlag": "0", "ge.inputShape": "x:1,2;y:3"}
    with pytest.raises(GeError, match=r"^--option 'ge.runFlag' must have the form KEY=VALUE$"):
        parse_options(["ge.runFlag"])
    with pytest.raises(GeError, match=r"^--option ge.runFlag is given twice$"):
        parse_options(["ge.runFlag=0", "ge.runFlag=1"])


ADD_SCRIPT = """
import dfir.dataflow as df

@df.pyflow
def add(a, b):
    return a + b

x = df.FlowData(name="x")
y = df.FlowData(name="y")
graph = df.FlowGraph([add.fnode()(x, y)])
"""


def test_dfir_compile_inspect_and_run_a_script(tmp_path, capsys):
    script = tmp_path / "add.py"
    script.write_text(ADD_SCRIPT)
    model = tmp_path / "add.om"
    assert main(["compile", str(script), "-o", str(model)]) == 0
    assert capsys.readouterr().out == f"wrote {model}\n"
    assert main(["inspect", str(model)]) == 0
    assert 'node 0 "add_fnode" pp=py_udf device="-1" inputs=[data:0,data:1] udf=0 funcs=[add]\n' in \
        capsys.readouterr().out
    np.save(tmp_path / "x.npy", np.array([1, 2], np.int32))
    np.save(tmp_path / "y.npy", np.array([10, 20], np.int32))
    inputs = ["--input", f"x={tmp_path / 'x.npy'}", "--input", f"y={tmp_path / 'y.npy'}"]
    assert main(["run", str(model), *inputs, "--timeout", "10000"]) == 0
    assert capsys.readouterr().out == "output 0: shape=[2] dtype=int32\n[11, 22]\n"
    out_dir = tmp_path / "outs"
    assert main(["run", str(model), *inputs, "--output-dir", str(out_dir)]) == 0
    assert capsys.readouterr().out == f"output 0: shape=[2] dtype=int32 -> {out_dir / 'out_0.npy'}\n"
    assert np.load(out_dir / "out_0.npy").tolist() == [11, 22]


def test_dfir_compile_and_run_report_bad_arguments(tmp_path, capsys):
    script = tmp_path / "empty.py"
    script.write_text("x = 1\n")
    assert main(["compile", str(script), "-o", str(tmp_path / "m.om")]) == 1
    assert capsys.readouterr().err == f"error: {no_graph_message('FlowGraph or Graph', ran_main=False)}\n"
    assert main(["compile", str(tmp_path / "none.py"), "-o", str(tmp_path / "m.om")]) == 1
    assert capsys.readouterr().err == f"error: script {str(tmp_path / 'none.py')!r} does not exist\n"
    assert main(["run", str(tmp_path / "m.om"), "--input", "x"]) == 1
    assert capsys.readouterr().err == "error: --input 'x' must have the form NAME=FILE.npy\n"
    assert main(["run", str(tmp_path / "m.om"), "--input", f"x={tmp_path / 'none.npy'}"]) == 1
    assert capsys.readouterr().err.startswith(f"error: input 'x': cannot read {str(tmp_path / 'none.npy')!r} as an "
                                              f".npy array ([Errno 2] No such file or directory")
