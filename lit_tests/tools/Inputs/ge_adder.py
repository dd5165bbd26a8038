# A GE DataFlow script as GE users write it: `import dataflow as df`, arguments from sys.argv.
import sys

import dataflow as df
import dataflow.flow_func as ff
import numpy as np


@df.pyflow
def add(x, y):
    return x + y


df.init({"ge.exec.deviceId": "0"})
x, y = df.FlowData(), df.FlowData()
graph = df.FlowGraph([add.fnode()(x, y)])
scale = int(sys.argv[1])
graph.feed_data({x: np.array([1, 2], np.int32) * scale, y: np.array([10, 20], np.int32)})
outputs, _, ret = graph.fetch_data()
print("sum", outputs[0].numpy().tolist(), "ret", ret, "success", ff.FLOW_FUNC_SUCCESS)
df.finalize()
sys.exit(int(sys.argv[2]))
