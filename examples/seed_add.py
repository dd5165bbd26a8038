"""Seed 001, "通过注解创建UDF": a @pyflow function and a @pyflow class wired into one FlowGraph.

Only the import line differs from the seed. Run: python examples/seed_add.py
"""
import numpy as np

import dfir.dataflow as df


@df.pyflow()
def add(a, b):
    return a + b


@df.pyflow
class Add():
    @df.method()
    def add(self, a, b):
        return a + b


def run():
    data0 = df.FlowData()
    data1 = df.FlowData()

    flow_node0 = add.fnode()
    flow_node1 = Add.fnode()

    flow_node0_out = flow_node0(data0, data1)
    flow_node1_out = flow_node1.add(flow_node0_out, data1)

    dag = df.FlowGraph([flow_node1_out])

    feed_data0 = np.ones([1, 2], dtype=np.int32)
    feed_data1 = np.array([[1, 2]], dtype=np.int32)
    flow_info = df.FlowInfo()
    flow_info.start_time = 0
    flow_info.end_time = 5
    dag.feed_data({data0: feed_data0, data1: feed_data1}, flow_info)
    outputs, info, ret = dag.fetch_data(timeout=5000)
    return [t.numpy() for t in outputs], info, ret


if __name__ == "__main__":
    outputs, info, ret = run()
    print(f"ret={ret} outputs={[o.tolist() for o in outputs]} {info}")
    df.finalize()
