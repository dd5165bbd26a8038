"""dfir: a multi-level compiler and runtime for dataflow pipelines.

    compiled = dfir.compile(graph, options)   # FlowGraph or GE Graph -> CompiledModel
    compiled.save("model")                    # writes model.om
    with dfir.load("model.om") as model:      # a runtime model (path or bytes)
        model.feed_data([a, b])
        outputs, info, ret = model.fetch_data(timeout=5000)

`compile` and `CompiledModel` (the compiler) and `load` (the runtime) are imported on first use
(PEP 562): `import dfir` imports neither, and a process that only loads and runs `.om` files never
imports the compiler or xDSL (docs/runtime.md, "Loading without the compiler").
"""
from dfir.core.version import VERSION
from dfir.frontend.dataflow import session

__version__ = VERSION
__all__ = ["CompiledModel", "compile", "load"]


def __getattr__(name: str):
    if name in ("compile", "CompiledModel"):
        from dfir.driver import compiler  # lazy: the compiler and xDSL take a second to import; loading needs neither
        value = getattr(compiler, name)
    elif name == "load":
        from dfir.runtime.driver import loader  # lazy: `import dfir` alone starts no runtime
        value = loader.load
    else:
        raise AttributeError(f"module 'dfir' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def _compile(graph, options):
    return __getattr__("compile")(graph, options)


def _load(om):
    return __getattr__("load")(om)


session.set_engine(session.Engine(_compile, _load))
