"""The execution plan's validator (`dfir.om.plan.Plan.from_json`) against real plans taken apart.

The plans of a few compiled pipelines (tests/om/plan_samples.py) are mutated (fields deleted,
added or retyped, numbers moved out of range, list items swapped, values moved elsewhere) and
written back into correctly checksummed `.om` files: the validator, and `dfir.load` with a short
feed and fetch when the plan still loads, either work or raise a GeError, never anything else.
"""
from __future__ import annotations

import copy
import json
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dfir
from dfir.core.errors import GeError
from dfir.frontend.dataflow import names
from dfir.lowering.om_writer import write_om
from dfir.om.plan import Plan, canonical_json
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om
from plan_samples import SAMPLES

WAIT_MS = 300  # a mutated plan may never deliver: a fetch gives up after this


class Model(NamedTuple):
    """A compiled sample: its plan's JSON, its other partitions in order, its name and a feed."""

    plan: dict
    partitions: list[tuple[PartitionType, bytes]]
    name: str
    feed: list[np.ndarray]

    def om(self, plan: Any) -> bytes:
        """The sample's `.om` with `plan` (a JSON document) in place of its own."""
        data = canonical_json(plan)
        parts = [(kind, data if kind == PartitionType.FLOW_MODEL else blob) for kind, blob in self.partitions]
        return write_om([parts], name=self.name)

    def blobs(self, kind: PartitionType) -> list[bytes]:
        return [blob for k, blob in self.partitions if k == kind]

    def check_partitions(self, plan: Plan) -> None:
        """`plan.check_partitions` against the sample's partitions."""
        plan.check_partitions(self.blobs(PartitionType.UDF_PAYLOAD), self.blobs(PartitionType.SO_BINS),
                              (self.blobs(PartitionType.WEIGHTS_DATA) or [None])[0],
                              executables=self.blobs(PartitionType.GE_EXECUTABLE))


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Model]:
    compiled = {}
    for sample, build in SAMPLES.items():
        names.reset()
        built = build(tmp_path_factory.mktemp(sample))
        om = read_om(built.om)
        partitions = [(p.type, bytes(p.data)) for p in om.models[0].partitions
                      if p.type != PartitionType.PARTITION_CHECKSUMS]
        plan = json.loads(dict(partitions)[PartitionType.FLOW_MODEL])
        compiled[sample] = Model(plan, partitions, om.header.name, built.feed)
    return compiled


# -- mutations ------------------------------------------------------------------------------------

POOL = [None, True, False, 0, 1, -1, 2, 3, 7, 64, 1 << 31, 1 << 63, -(1 << 63) - 1, 0.5, "", "x", "view",
        "-1", "0:0:1", "0:0:-1:0", "DT_FLOAT", "round_robin", "route_label", "py_udf", "ge_graph", [], [0],
        [0, 1], [[0, 64]], {}, {"data": 0}, {"node": 0, "port": 0}, {"cache": 1, "timeout": -1, "dropout": True}]


def paths(document: Any, prefix: tuple = ()) -> list[tuple]:
    """The path (keys and indexes) of every value inside `document`, containers included."""
    items = document.items() if isinstance(document, dict) else enumerate(document) \
        if isinstance(document, list) else ()
    found = []
    for key, value in items:
        found.append((*prefix, key))
        found += paths(value, (*prefix, key))
    return found


def at(document: Any, path: tuple) -> Any:
    for key in path:
        document = document[key]
    return document


def mutate(data, plan: dict) -> None:
    """One mutation of `plan`, in place, drawn from `data`."""
    every = paths(plan)
    kind = data.draw(st.sampled_from(["delete", "replace", "move", "nudge", "swap", "add"]))
    if kind == "swap":
        lists = [p for p in every if isinstance(at(plan, p), list) and len(at(plan, p)) > 1]
        if lists:
            items = at(plan, data.draw(st.sampled_from(lists)))
            i, j = data.draw(st.sampled_from([(i, j) for i in range(len(items)) for j in range(i)]))
            items[i], items[j] = items[j], items[i]
        return
    if kind == "add":
        objects = [p for p in every if isinstance(at(plan, p), dict)] + [()]
        at(plan, data.draw(st.sampled_from(objects)))[data.draw(st.sampled_from(["extra", "kind", "pp"]))] = \
            copy.deepcopy(data.draw(st.sampled_from(POOL)))
        return
    path = data.draw(st.sampled_from(every))
    parent, key = at(plan, path[:-1]), path[-1]
    if kind == "delete":
        del parent[key]
    elif kind == "replace":
        parent[key] = copy.deepcopy(data.draw(st.sampled_from(POOL)))
    elif kind == "move":
        parent[key] = copy.deepcopy(at(plan, data.draw(st.sampled_from(every))))
    elif isinstance(parent[key], int) and not isinstance(parent[key], bool):
        parent[key] += data.draw(st.sampled_from([-2, -1, 1, 2, 64, 1000]))


def mutated(data, models: dict[str, Model]) -> tuple[Model, dict]:
    model = models[data.draw(st.sampled_from(sorted(models)))]
    plan = copy.deepcopy(model.plan)
    for _ in range(data.draw(st.integers(1, 3))):
        mutate(data, plan)
    return model, plan


# -- properties -----------------------------------------------------------------------------------

def test_the_samples_round_trip_to_their_bytes(models):
    for model in models.values():
        data = dict(model.partitions)[PartitionType.FLOW_MODEL]
        plan = Plan.from_json(data)
        model.check_partitions(plan)
        assert plan.to_bytes() == data


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.data_too_large])
@given(data=st.data())
def test_a_mutated_plan_validates_or_raises_a_ge_error_naming_its_path(models, data):
    model, plan = mutated(data, models)
    try:
        typed = Plan.from_json(canonical_json(plan))
        model.check_partitions(typed)
    except GeError as error:
        assert error.error_message.startswith("plan"), error.error_message
        return
    assert Plan.from_json(typed.to_bytes()) == typed


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(data=st.data())
def test_a_mutated_om_loads_and_runs_or_raises_a_ge_error(models, data):
    model, plan = mutated(data, models)
    try:
        with dfir.load(model.om(plan), trust="any") as loaded:
            if loaded.feed_data(model.feed, timeout=WAIT_MS) == 0:
                loaded.fetch_data(timeout=WAIT_MS)
    except GeError:
        pass


# -- messages -------------------------------------------------------------------------------------

def _edited(plan: dict, path: tuple, value: Any) -> dict:
    plan = copy.deepcopy(plan)
    if value is _DELETE:
        del at(plan, path[:-1])[path[-1]]
    else:
        at(plan, path[:-1])[path[-1]] = value
    return plan


_DELETE = object()


@pytest.mark.parametrize("sample, path, value, message", [
    ("pyflow_chain", ("nodes", 1, "inputs", 0, "node"), 7, "plan.nodes[1].inputs[0].node: 7 is out of range [0, 3)"),
    ("pyflow_chain", ("nodes", 2, "inputs", 0, "port"), 1, "plan.nodes[2].inputs[0].port: 1 is out of range [0, 1)"),
    ("pyflow_chain", ("nodes", 0, "pp"), _DELETE, 'plan.nodes[0]: missing field "pp"'),
    ("pyflow_chain", ("outputs", 0, "node"), "2", 'plan.outputs[0].node: expected an integer, got "2"'),
    ("pyflow_chain", ("order",), [1, 0, 2], "plan.order[0]: node 1 comes before node 0, which feeds it"),
    ("pyflow_chain", ("order",), [0, 1, 1], "plan.order: [0,1,1] is not a permutation of the 3 node indexes"),
    ("pyflow_chain", ("nodes", 2, "pp", "udf"), 3, "plan.nodes[2].pp.udf: 3 is out of range [0, 3)"),
    ("pyflow_chain", ("nodes", 0, "pp", "funcs", 0, "inputs", 1), 2,
     "plan.nodes[0].pp.funcs[0].inputs[1]: 2 is out of range [0, 2)"),
    ("pyflow_chain", ("nodes", 0, "color"), "red",
     'plan.nodes[0]: unknown field "color"; expected "alias", "align", "attrs", "balance", "batch", '
     '"dispatch", "input_num", "inputs", "invokes", "loc", "name", "output_num", "pp"'),
    ("pyflow_chain", ("nodes", 0, "pp", "kind"), "py_func",
     'plan.nodes[0].pp.kind: "py_func" is not one of "py_udf", "py_project", "cpp_project", "ge_graph"'),
    ("pyflow_chain", ("format",), 3, "plan.format: 3 is not a plan format this dfir reads (1, 2); a newer dfir "
                                     "wrote it"),
    ("pyflow_chain", ("format",), 0, "plan.format: 0 is not a plan format this dfir reads (1, 2)"),
    ("pyflow_chain", ("units",), _DELETE, 'plan: missing field "units"'),
    ("pyflow_chain", ("format",), 1,
     'plan: unknown field "units"; expected "align", "channel_depth", "closures", "cluster", "exception_catch", '
     '"executables", "format", "ge_graphs", "inputs", "n_mapping", "name", "nodes", "order", "outputs", '
     '"recover", "shared_arena_bytes", "so_bins", "trace", "udf_timeouts", "udfs"'),
    ("replicated_aligned", ("units", 2, "device"), "0:1",
     'plan.units[2].device: "0:1" is not a device: "-1" (the host) or "cluster:server:device[:numa]"'),
    ("replicated_aligned", ("units", 2, "instance"), 2, "plan.units[2].instance: 2 is not 1, the next instance of "
                                                        "node 1"),
    ("replicated_aligned", ("units", 1, "instance"), 1, "plan.units[1].instance: 1 is not 0, the next instance of "
                                                        "node 1"),
    ("replicated_aligned", ("units", 3, "node"), 3, "plan.units[3].node: 3 does not follow node 1: units list "
                                                    "every node's instances, in node order"),
    ("replicated_aligned", ("units", 4, "node"), 4, "plan.units[4].node: 4 is out of range [0, 4)"),
    ("replicated_aligned", ("units", 4), _DELETE, "plan.units: node 3 has no unit: every node runs at least one "
                                                  "instance"),
    ("replicated_aligned", ("units", 0, "color"), "red",
     'plan.units[0]: unknown field "color"; expected "device", "instance", "node"'),
    ("replicated_aligned", ("nodes", 1, "instances"), ["0:0:0", "0:0:1"],
     'plan.nodes[1]: unknown field "instances"; expected "alias", "align", "attrs", "balance", "batch", '
     '"dispatch", "input_num", "inputs", "invokes", "loc", "name", "output_num", "pp"'),
    ("replicated_aligned", ("align", "cache"), 1025, "plan.align.cache: 1025 is out of range [0, 1024]"),
    ("replicated_aligned", ("nodes", 3, "input_num"), 3, "plan.nodes[3].input_num: 3 does not match the 2 entries "
                                                        "of inputs"),
    ("ge_graph_node", ("ge_graphs", 0, "ops", 2, "inputs", 1), 9,
     "plan.ge_graphs[0].ops[2].inputs[1]: value 9 is not defined before this op"),
    ("ge_graph_node", ("ge_graphs", 0, "ops", 3, "slots", 0), [32, 64],
     "plan.ge_graphs[0].ops[3].slots[0]: [32,64] lies outside the arena of 64 bytes"),
    ("ge_graph_node", ("ge_graphs", 0, "ops", 0, "attrs", "weight"), 2,
     "plan.ge_graphs[0].ops[0].attrs.weight: 2 is out of range [0, 2)"),
    ("ge_graph_node", ("ge_graphs", 0, "ops", 0, "attrs", "blob"), 7,
     "plan.ge_graphs[0].ops[0].attrs.blob: expected a string, got 7"),
    ("ge_graph_node", ("ge_graphs", 0, "weights", 1, "size"), 16,
     "plan.ge_graphs[0].weights[1].size: 16 is not the 8 bytes of a DT_FLOAT [2] tensor"),
    ("ge_graph_node", ("nodes", 1, "input_num"), 2,
     "plan.nodes[1].input_num: 2 does not match the 1 entries of inputs"),
    ("udf_project", ("nodes", 0, "pp", "closures", "invoke_graph"), 1,
     "plan.nodes[0].pp.closures.invoke_graph: 1 is out of range [0, 1)"),
    ("udf_project", ("nodes", 0, "pp", "init_params", "scale", "value"), 1.5,
     "plan.nodes[0].pp.init_params.scale.value: expected an integer, got 1.5"),
    ("pyflow_chain", ("cluster",), {"kind": "mesos"},
     'plan.cluster.kind: "mesos" is not a cluster kind: one of [\'local\', \'ray\']'),
    ("pyflow_chain", ("cluster",), {"kind": "ray", "address": "x"},
     'plan.cluster: unknown field "address"; expected "kind", "ray_address"'),
    ("pyflow_chain", ("recover",), "retry", 'plan.recover: "retry" is not one of "restart", "off"'),
    ("pyflow_chain", ("udf_timeouts",), {"inc_fnode": 0}, "plan.udf_timeouts.inc_fnode: 0 is out of range "
                                                          "[1, 86400000]"),
    ("pyflow_chain", ("udf_timeouts",), {"inc_fnode": "5s"}, 'plan.udf_timeouts.inc_fnode: expected an integer, '
                                                             'got "5s"'),
    ("pyflow_chain", ("udf_timeouts",), {"inc": 5}, 'plan.udf_timeouts.inc: no node is named "inc"; the nodes '
                                                    'are ["add_fnode","inc_fnode","split_fnode"]'),
    ("ge_graph_node", ("udf_timeouts",), {"mlp_node": 5},
     'plan.udf_timeouts.mlp_node: node "mlp_node" runs a GE graph; only a UDF node has a timeout'),
])
def test_a_defect_is_named_by_its_json_path(models, sample, path, value, message):
    with pytest.raises(GeError) as caught:
        Plan.from_json(_edited(models[sample].plan, path, value))
    assert caught.value.error_message == message


def format_1(plan: dict) -> dict:
    """`plan` as a format-1 compile wrote it: each node lists the devices of its units."""
    old = {**copy.deepcopy(plan), "format": 1}
    for unit in old.pop("units"):
        node = old["nodes"][unit["node"]]
        node.setdefault("device", unit["device"])
        node.setdefault("instances", []).append(unit["device"])
    return old


def test_a_format_1_plan_reads_as_the_format_2_plan_of_its_graph(models):
    for model in models.values():
        assert Plan.from_json(format_1(model.plan)) == Plan.from_json(model.plan)
    replicated = Plan.from_json(format_1(models["replicated_aligned"].plan))
    assert [(u.node, u.instance, u.device) for u in replicated.units] == [
        (0, 0, "-1"), (1, 0, "0:0:0"), (1, 1, "0:0:1"), (2, 0, "0:0:1"), (3, 0, "0:0:0")]
    with pytest.raises(GeError) as caught:
        Plan.from_json(_edited(format_1(models["replicated_aligned"].plan), ("nodes", 1, "device"), "0:0:1"))
    assert caught.value.error_message == 'plan.nodes[1].device: "0:0:1" is not instance 0\'s device "0:0:0"'


def test_a_format_1_om_loads_and_runs_as_its_format_2_om(models):
    model = models["replicated_aligned"]
    results = []
    for plan in (model.plan, format_1(model.plan)):
        with dfir.load(model.om(plan), trust="any") as loaded:
            assert loaded.feed_data(model.feed, timeout=10000) == 0
            outputs, _, ret = loaded.fetch_data(timeout=10000)
            results.append(([np.asarray(output).tolist() for output in outputs], ret))
    assert results[0] == results[1] == ([[10]], 0)


def test_dfir_load_names_the_model_and_checks_the_plan_against_the_partitions(models):
    model = models["pyflow_chain"]
    size = len(model.blobs(PartitionType.UDF_PAYLOAD)[1])
    with pytest.raises(GeError) as caught:
        dfir.load(model.om(_edited(model.plan, ("udfs", 1, "size"), size + 1)), trust="any")
    assert str(caught.value) == (f"dfir.load failed; model chain: plan.udfs[1].size: {size + 1} is not the "
                                 f"{size} bytes of UDF_PAYLOAD partition 1")
    with pytest.raises(GeError) as caught:
        dfir.load(model.om(_edited(model.plan, ("udfs",), model.plan["udfs"][:2])), trust="any")
    assert caught.value.error_message == ("model chain: plan.nodes[2].pp.udf: 2 is out of range [0, 2)")


def test_a_plan_that_is_no_json_object_is_a_ge_error():
    with pytest.raises(GeError) as caught:
        Plan.from_json(b"{not json")
    assert caught.value.error_message.startswith("plan is not valid JSON: Expecting property name")
    with pytest.raises(GeError) as caught:
        Plan.from_json(b"[]")
    assert caught.value.error_message == "plan: expected an object, got []"
