"""A process that has run an IREE graph on the threaded CPU driver (`local-task`) still forks
workers that run theirs: a forked child never releases the devices it inherited, whose worker
threads it does not have (releasing one would wait for them forever)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import numpy as np
    import dfir
    import dfir.data_type as dt
    from dfir.ge.graph import Graph
    from dfir.om.plan import Plan
    from dfir.om.schema import PartitionType
    from dfir.runtime.worker.host import load_ge_runner
    from dfir.runtime.om import read_om

    g = Graph("mlp")
    x = g.data(0, [-1, 8], dt.DT_FLOAT, name="x")
    g.set_outputs([g.relu(g.matmul(x, g.const(np.eye(8, dtype=np.float32))))])
    om = dfir.compile(g, {"dfir.ge.backend": "iree-cpu", "dfir.ge.threads": "2"}).om
    model = read_om(om).models[0]
    plan = Plan.from_json(bytes(model.partition(PartitionType.FLOW_MODEL).data))
    code = [(plan.executables[0], model.partition(PartitionType.GE_EXECUTABLE).data)]
    runner = load_ge_runner(plan.ge_graphs[0], model.partition(PartitionType.WEIGHTS_DATA).data, code)
    ones = np.ones((2, 8), np.float32)
    assert runner.run([ones])[0].sum() == 16.0  # a local-task device now lives in this process
    with dfir.load(om) as loaded:  # forks the worker
        assert loaded.feed_data([ones]) == 0
        outputs, _, ret = loaded.fetch_data(timeout=30000)
    assert ret == 0 and outputs[0].numpy().sum() == 16.0
    print("ran")
""")


def test_a_process_with_a_threaded_iree_device_forks_workers_that_run():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ran")
