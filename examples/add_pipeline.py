"""The main job: compile a pipeline to an `.om` file, load that file, run it and print the results.

    x, y --> add --> scale(x2) --> out
Run: python examples/add_pipeline.py [output.om]
"""
import sys

import numpy as np

import dfir
import dfir.dataflow as df


@df.pyflow
def add(a, b):
    return a + b


@df.pyflow
class Scale:
    def __init__(self, factor):
        self.factor = factor

    @df.method()
    def scale(self, x):
        return x * self.factor


def build() -> df.FlowGraph:
    x, y = df.FlowData(name="x"), df.FlowData(name="y")
    total = add.fnode()(x, y)
    return df.FlowGraph([Scale.fnode(2).scale(total)], name="add_pipeline")


def main(path: str = "add_pipeline.om") -> list[np.ndarray]:
    compiled = dfir.compile(build())
    written = compiled.save(path)
    print(f"compiled {written}: {len(compiled.om)} bytes; {compiled.report}")
    results = []
    with dfir.load(written) as model:
        for i in range(3):
            model.feed_data({"x": np.full([2, 2], i, np.int32), "y": np.ones([2, 2], np.int32)})
        for i in range(3):
            outputs, info, ret = model.fetch_data(timeout=5000)
            print(f"transaction {info.transaction_id}: ret={ret} out={outputs[0].numpy().tolist()}")
            results.append(outputs[0].numpy())
    return results


if __name__ == "__main__":
    main(*sys.argv[1:])
