"""A three-node FlowGraph whose middle node `replicas-deploy.json` places on two devices."""
import dfir.dataflow as df


@df.pyflow
def inc(x):
    return x + 1


x = df.FlowData(name="x")
pre, work, post = (inc.fnode().set_alias(alias) for alias in ("pre", "work", "post"))
graph = df.FlowGraph([post(work(pre(x)))], name="replicas")
