"""A two-input FlowGraph for the CLI tests."""
import dfir.dataflow as df


@df.pyflow
def add(a, b):
    return a + b


@df.pyflow(num_returns=2)
def split(x):
    return x, -x


x, y = df.FlowData(name="x"), df.FlowData(name="y")
total = add.fnode()(x, y)
pos, neg = split.fnode()(total)
graph = df.FlowGraph([neg, pos], name="adder")
