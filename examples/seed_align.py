"""Seed 001, "数据对齐" (data alignment): Model X feeds two streams to Model A and Model B, each
deployed as two instances on two devices, and Model C pairs their results again by transaction.

Model A is a GE graph (x @ w, then relu), Model B and C are UDFs; the deploy file
`seed_align_deploy.json` places the nodes. Only the import lines differ from the seed's calls.
Run: python examples/seed_align.py; draw it: dfir view examples/seed_align.py -o align.html
"""
import os

import numpy as np

import dfir.data_type as dt
import dfir.dataflow as df
from dfir.ge.graph import Graph

DEPLOY_INFO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seed_align_deploy.json")


def model_a_graph() -> Graph:
    g = Graph("model_a")
    x = g.data(0, shape=[-1, 4], dtype=dt.DT_FLOAT, name="a_in")
    w = g.const(np.arange(16, dtype=np.float32).reshape(4, 4) / 16)
    g.set_outputs([g.relu(g.matmul(x, w))])
    return g


@df.pyflow(num_returns=2)
def model_x(x):
    return x, -x


@df.pyflow
def model_b(x):
    return x * 2


@df.pyflow
def model_c(a, b):
    return a + b


def build(data0: df.FlowData) -> df.FlowGraph:
    a_in, b_in = model_x.fnode()(data0)
    a = df.GraphProcessPoint(df.Framework.ONNX, model_a_graph()).fnode(1, 1, name="model_a")(a_in)
    b = model_b.fnode()(b_in)
    dag = df.FlowGraph([model_c.fnode()(a, b)], {"ge.experiment.data_flow_deploy_info_path": DEPLOY_INFO},
                       name="seed_align")
    dag.set_inputs_align_attrs(align_max_cache_num=256, align_timeout=60 * 1000, dropout_when_not_align=True)
    return dag


data0 = df.FlowData(name="x")
dag = build(data0)


def run(count: int = 4) -> list[np.ndarray]:
    """Feed `count` inputs and fetch the results, in transaction order."""
    for i in range(count):
        assert dag.feed_data({data0: np.full([2, 4], i, np.float32)}) == 0
    results = {}
    for _ in range(count):
        outputs, info, ret = dag.fetch_data(timeout=60_000)
        assert ret == 0, ret
        results[info.transaction_id] = outputs[0].numpy()
    return [results[k] for k in sorted(results)]


if __name__ == "__main__":
    for value in run():
        print(value.tolist())
    df.finalize()
