"""dfir: a multi-level compiler and runtime for dataflow pipelines.

    compiled = dfir.compile(graph, options)   # FlowGraph or GE Graph -> CompiledModel
    compiled.save("model")                    # writes model.om
    with dfir.load("model.om") as model:      # a runtime model (path or bytes)
        model.feed_data([a, b])
        outputs, info, ret = model.fetch_data(timeout=5000)
"""
from dfir.core.version import VERSION
from dfir.driver.compiler import CompiledModel, compile
from dfir.frontend.dataflow import session
from dfir.runtime.driver.loader import load

__version__ = VERSION
__all__ = ["CompiledModel", "compile", "load"]

session.set_engine(session.Engine(compile, load))
