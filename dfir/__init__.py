"""dfir: a multi-level compiler and runtime for dataflow pipelines.

    compiled = dfir.compile(graph, options)   # FlowGraph or GE Graph -> CompiledModel
    compiled.save("model")                    # writes model.om
    with dfir.load("model.om") as model:      # a runtime model (path or bytes)
        model.feed_data([a, b])
        outputs, info, ret = model.fetch_data(timeout=5000)
"""
from dfir.driver.compiler import CompiledModel, compile  # noqa: F401
from dfir.runtime.loader import load  # noqa: F401

__version__ = "0.1.0"
