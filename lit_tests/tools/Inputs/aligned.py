"""Three nodes: `pre` scatters (balance) to `work`, which `aligned-deploy.json` places on two
devices, and `join` gathers and pairs its two inputs by the graph's input alignment."""
import dfir.dataflow as df


@df.pyflow
def inc(x):
    return x + 1


@df.pyflow
def add(a, b):
    return a + b


x = df.FlowData(name="x")
y = df.FlowData(name="y")
pre = inc.fnode().set_alias("pre")
pre.set_balance_scatter()
work = inc.fnode().set_alias("work")
join = add.fnode().set_alias("join")
join.set_balance_gather()
graph = df.FlowGraph([join(work(pre(x)), y)], name="aligned")
graph.set_inputs_align_attrs(8, 1000, True)
