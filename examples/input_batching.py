"""Input batching: `map_input` with GE's `CountBatch` and `TimeBatch`.

A GE graph that scores [N, 4] rows runs behind `CountBatch(batch_size=4)`: each feed is one row
of 4 features, and the graph is called once per 4 feeds on their [4, 4] stack. A UDF behind
`TimeBatch(time_window=10, batch_dim=0)` sums the readings of each 10 ms of FlowInfo time.
Run: python examples/input_batching.py
"""
import numpy as np

import dfir.data_type as dt
import dfir.dataflow as df
from dfir.ge.graph import Graph

WEIGHTS = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)


def scorer() -> Graph:
    g = Graph("scorer")
    rows = g.data(0, shape=[-1, 4], dtype=dt.DT_FLOAT, name="rows")
    g.set_outputs([g.matmul(rows, g.const(WEIGHTS))])
    return g


def count_batched(samples: np.ndarray) -> list:
    """Each result: the scores of 4 samples, with the FlowInfo of the newest one."""
    point = df.GraphProcessPoint(df.Framework.ONNX, scorer())
    node = point.fnode(1, 1)
    x = df.FlowData(name="x")
    dag = df.FlowGraph([node(x)])
    node.map_input(0, point, 0, [df.CountBatch(batch_size=4)])
    for sample in samples:
        dag.feed_data({x: sample})
    results = []
    for _ in range(len(samples) // 4):
        outputs, info, ret = dag.fetch_data(timeout=10_000)
        results.append((ret, outputs[0].numpy()[:, 0].tolist(), info.transaction_id))
    return results


@df.pyflow
def total(readings):
    return readings.sum(keepdims=True)


def time_batched(readings: list[int]) -> list:
    """One reading per 5 ms of FlowInfo time; each result sums a 10 ms window."""
    node = total.fnode()
    x = df.FlowData(name="reading")
    dag = df.FlowGraph([node(x)])
    node.map_input(0, node.process_points[0], 0, [df.TimeBatch(time_window=10, batch_dim=0)])
    for k, value in enumerate(readings):
        dag.feed_data({x: np.array([value], np.int32)}, df.FlowInfo(start_time=5 * k, end_time=5 * k + 5))
    results = []
    for _ in range(len(readings) // 2):
        outputs, info, ret = dag.fetch_data(timeout=10_000)
        results.append((ret, outputs[0].numpy().tolist(), (info.start_time, info.end_time)))
    return results


if __name__ == "__main__":
    print("CountBatch:", count_batched(np.eye(4, dtype=np.float32).repeat(2, axis=0)))
    print("TimeBatch:", time_batched([1, 2, 3, 4]))
    df.finalize()
