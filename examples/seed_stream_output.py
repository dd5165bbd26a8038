"""Seed 001, "流式输出": generator UDFs; one call yields five outputs.

Only the import line differs from the seed. Run: python examples/seed_stream_output.py
"""
import numpy as np

import dfir.dataflow as df


@df.pyflow
def func(a):
    for i in range(5):
        yield a + i


@df.pyflow
class Foo():
    @df.method()
    def func(self, a):
        for i in range(5):
            yield a + i


def run(udf_node):
    """Feed 100 once; fetch the five streamed outputs 100..104."""
    x = df.FlowData()
    dag = df.FlowGraph([udf_node(x)])
    dag.feed_data({x: np.array([100], dtype=np.int64)})
    results = []
    for _ in range(5):
        outputs, _, ret = dag.fetch_data(timeout=5000)
        results.append((ret, int(outputs[0].numpy()[0]) if outputs else None))
    return results


if __name__ == "__main__":
    print("function:", run(func.fnode()))
    node = Foo.fnode()
    print("class:", run(node.func))
    df.finalize()
