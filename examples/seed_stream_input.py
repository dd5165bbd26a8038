"""Seed 001, "流式输入": UDFs that take their inputs as queues (stream_input='Queue').

Each call of `func` takes two messages from `a` and one from `b`. Only the import line differs
from the seed. Run: python examples/seed_stream_input.py
"""
import numpy as np

import dfir.dataflow as df


@df.pyflow(stream_input='Queue')
def func(a, b):
    data1 = a.get()
    data2 = a.get()
    data3 = b.get()
    return data1 + data2 + data3


@df.pyflow
class Foo():
    @df.method(stream_input='Queue')
    def func(self, a, b):
        data1 = a.get()
        data2 = a.get()
        data3 = b.get()
        return data1 + data2 + data3


def run(udf_node):
    """Feed a = 1, 2, 3, 4 and b = 10, 20; the UDF yields 1+2+10 and 3+4+20."""
    a, b = df.FlowData(name="a"), df.FlowData(name="b")
    dag = df.FlowGraph([udf_node(a, b)])
    for i in range(4):
        feed = {a: np.array([i + 1], dtype=np.int32)}
        if i < 2:
            feed[b] = np.array([(i + 1) * 10], dtype=np.int32)
        dag.feed_data(feed, partial_inputs=True)
    results = []
    for _ in range(2):
        outputs, _, ret = dag.fetch_data(timeout=5000)
        results.append((ret, outputs[0].numpy().tolist() if outputs else None))
    return results


if __name__ == "__main__":
    print("function:", run(func.fnode()))
    node = Foo.fnode()
    print("class:", run(node.func))
    df.finalize()
