"""A FlowGraph whose node batches its input 0 by count and its input 1 by time."""
import dfir.dataflow as df


@df.pyflow
def add(a, b):
    return a + b


x, y = df.FlowData(name="x"), df.FlowData(name="y")
node = add.fnode()
total = node(x, y)
node.map_input(0, node.process_points[0], 0, [df.CountBatch(batch_size=4, slide_stride=2, timeout=100, padding=True)])
node.map_input(1, node.process_points[0], 1, [df.TimeBatch(time_window=5, batch_dim=0)])
graph = df.FlowGraph([total], name="batcher")
