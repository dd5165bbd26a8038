"""The plan's `executables` table and a GE graph's `backend` / `executable` fields
(docs/execution-plan.md): validation messages, the GE_EXECUTABLE partitions, round trips."""
from __future__ import annotations

import copy
import hashlib

import pytest

import dfir
from dfir.core.errors import GeError
from dfir.lowering.om_writer import write_om
from dfir.lowering.plan import UnitPlan
from dfir.om.plan import Plan, canonical_json
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om
from codegen_graphs import ADD_I32, codegen_pass  # noqa: F401
from plan_samples import udf_project

VMFB = b"not really a vmfb"
GRAPH = {"name": "g", "inputs": [{"name": "x", "index": 0, "dtype": "DT_FLOAT", "shape": [-1],
                                  "ranges": [[0, -1]], "value": 0}],
         "ops": [{"op": "add", "name": "add_0", "inputs": [0, 0], "outputs": [1], "attrs": {}}],
         "outputs": [1], "weights": [], "backend": "iree-cpu", "executable": 0, "output_dtypes": ["DT_FLOAT"]}
EXECUTABLE = {"partition": 0, "backend": "iree-cpu", "target": "llvm-cpu host x86_64",
              "sha256": hashlib.sha256(VMFB).hexdigest(), "size": len(VMFB)}
PLAN = {"format": 2, "name": "compiled", "inputs": [{"name": "x", "index": 0, "dtype": None, "shape": None}],
        "outputs": [{"node": 0, "port": 0}],
        "nodes": [{"name": "g_node", "alias": None, "loc": None, "input_num": 1, "output_num": 1,
                   "inputs": [{"data": 0}], "dispatch": "round_robin",
                   "balance": None, "align": None, "invokes": {}, "attrs": {}, "pp": {"kind": "ge_graph", "graph": 0}}],
        "units": [{"node": 0, "instance": 0, "device": "-1"}], "order": [0], "align": None, "udfs": [], "ge_graphs": [GRAPH], "executables": [EXECUTABLE]}


def edited(path: tuple, value) -> dict:
    plan = copy.deepcopy(PLAN)
    target = plan
    for key in path[:-1]:
        target = target[key]
    if value is None and path[-1] == "executable":
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return plan


def test_a_compiled_graph_round_trips():
    plan = Plan.from_json(canonical_json(PLAN))
    assert (plan.ge_graphs[0].backend, plan.ge_graphs[0].executable) == ("iree-cpu", 0)
    assert plan.executables[0].target == "llvm-cpu host x86_64"
    assert plan.to_json() == PLAN
    plan.check_partitions([], [], None, executables=[VMFB])


def test_a_reference_graph_writes_neither_field():
    reference = {key: value for key, value in GRAPH.items() if key not in ("backend", "executable", "output_dtypes")}
    plan = Plan.from_json({**PLAN, "ge_graphs": [reference], "executables": []})
    assert plan.ge_graphs[0].backend == "reference" and plan.ge_graphs[0].executable is None
    assert "backend" not in plan.to_json()["ge_graphs"][0] and "executables" not in plan.to_json()


@pytest.mark.parametrize("path, value, message", [
    (("ge_graphs", 0, "executable"), None,
     'plan.ge_graphs[0]: missing field "executable": the backend "iree-cpu" runs compiled code'),
    (("ge_graphs", 0, "backend"), "reference",
     'plan.ge_graphs[0].executable: 0: the backend "reference" runs no executable'),
    (("ge_graphs", 0, "backend"), "tpu",
     'plan.ge_graphs[0].backend: "tpu" is not one of "reference", "iree-cpu", "iree-cuda", "onnxruntime"'),
    (("ge_graphs", 0, "executable"), 1, "plan.ge_graphs[0].executable: 1 is out of range [0, 1)"),
    (("ge_graphs", 0, "backend"), "iree-cuda",
     'plan.ge_graphs[0].backend: "iree-cuda" is not executables[0]\'s "iree-cpu"'),
    (("ge_graphs", 0, "output_dtypes"), ["DT_FLOAT", "DT_INT8"],
     "plan.ge_graphs[0].output_dtypes: has 2 entries for 1 outputs"),
    (("ge_graphs", 0, "output_dtypes"), ["DT_NOPE"],
     "plan.ge_graphs[0].output_dtypes[0]: unknown data type 'DT_NOPE', expected one of ['DT_BF16', 'DT_BOOL', "
     "'DT_DOUBLE', 'DT_FLOAT', 'DT_FLOAT16', 'DT_INT16', 'DT_INT32', 'DT_INT64', 'DT_INT8', 'DT_STRING', "
     "'DT_UINT16', 'DT_UINT32', 'DT_UINT64', 'DT_UINT8']"),
    (("executables", 0, "backend"), "reference",
     'plan.executables[0].backend: "reference" is not one of "iree-cpu", "iree-cuda", "onnxruntime"'),
    (("executables", 0, "partition"), 1, "plan.executables[0].partition: 1 is not its position 0"),
    (("executables", 0, "target"), "", "plan.executables[0].target: expected a non-empty string"),
    (("executables", 0, "sha256"), "x", 'plan.executables[0].sha256: expected a SHA-256 as 64 lowercase hex '
                                        'digits, got "x"'),
])
def test_a_defect_is_named_by_its_json_path(path, value, message):
    with pytest.raises(GeError) as caught:
        Plan.from_json(edited(path, value))
    assert caught.value.error_message == message


@pytest.mark.parametrize("partitions, message", [
    ([], "plan.executables: lists 1 entries, but the model has 0 GE_EXECUTABLE partitions"),
    ([VMFB + b"!"], f"plan.executables[0].size: {len(VMFB)} is not the {len(VMFB) + 1} bytes of "
                    f"GE_EXECUTABLE partition 0"),
    ([VMFB.upper()], f'plan.executables[0].sha256: "{EXECUTABLE["sha256"][:56]}... is not the SHA-256 of '
                     f'GE_EXECUTABLE partition 0 ({hashlib.sha256(VMFB.upper()).hexdigest()})'),
])
def test_the_executables_are_checked_against_the_partitions(partitions, message):
    with pytest.raises(GeError) as caught:
        Plan.from_json(PLAN).check_partitions([], [], None, executables=partitions)
    assert caught.value.error_message == message


def om_of(plan: dict, executables: list[bytes]) -> bytes:
    partitions = [(PartitionType.FLOW_MODEL, canonical_json(plan))]
    partitions += [(PartitionType.GE_EXECUTABLE, vmfb) for vmfb in executables]
    return write_om([partitions], name=plan["name"])


def test_the_om_holds_one_iree_executable_partition_per_entry():
    model = read_om(om_of(PLAN, [VMFB])).models[0]
    [partition] = model.partitions_of(PartitionType.GE_EXECUTABLE)
    assert bytes(partition.data) == VMFB and partition.offset % 64 == 0


def test_dfir_load_checks_the_executables_and_refuses_one_iree_cannot_load():
    with pytest.raises(GeError) as caught:
        dfir.load(om_of(PLAN, []), trust="any")  # hand-written, unsigned
    assert caught.value.error_message == ("model compiled: plan.executables: lists 1 entries, but the model has "
                                          "0 GE_EXECUTABLE partitions")
    with pytest.raises(GeError) as caught:
        dfir.load(om_of(PLAN, [VMFB]), trust="any").close()
    assert "GE graph 'g': IREE cannot load its executable: " in str(caught.value)


def test_a_unit_names_executables_it_has():
    unit = {"pp": {"kind": "ge_graph", "graph": 0}, "udfs": [], "so_bins": [], "ge_graphs": [GRAPH],
            "executables": [EXECUTABLE]}
    assert UnitPlan.from_json(unit).to_json() == unit
    with pytest.raises(GeError) as caught:
        UnitPlan.from_json({**unit, "executables": []})
    assert caught.value.error_message == "unit.ge_graphs[0].executable: 0 is out of range [0, 0)"


def test_a_udf_project_invokes_a_compiled_closure(codegen_pass, tmp_path):
    codegen_pass["add_graph"] = ("iree-cpu", ADD_I32)
    sample = udf_project(tmp_path)
    model = read_om(sample.om).models[0]
    plan = Plan.from_json(model.partition(PartitionType.FLOW_MODEL).data)
    assert plan.ge_graphs[0].backend == "iree-cpu" and len(model.partitions_of(PartitionType.GE_EXECUTABLE)) == 1
    with dfir.load(sample.om) as loaded:
        assert loaded.feed_data(sample.feed) == 0
        outputs, _, ret = loaded.fetch_data(timeout=30_000)
    assert ret == 0 and outputs[0].numpy().tolist() == [9, 11]
