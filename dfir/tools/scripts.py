"""The graph a Python script builds (`dfir compile`, `dfir view`, `dfir deploy template`).

The script runs first as a module (not as __main__), and its graph is taken from its globals.
A script that builds its graph inside a function (`main()`, called under
`if __name__ == "__main__":`, as GE's samples do) holds none there: it then runs again as
__main__, with `sys.argv` just the script, and the graph is the one it feeds first
(`feed_data` / `feed`), taken before that feed runs: GE takes every setting of a graph before
its first feed, so the graph is complete there and nothing runs. A script that feeds none gives
the graph it built, if it built one.
"""
from __future__ import annotations

import ast
import functools
import os
import runpy
import sys
from contextlib import contextmanager
from typing import Any, Iterator, Mapping

from dfir.core.errors import GeError
from dfir.frontend.dataflow import names, session

MAIN_BLOCK = 'if __name__ == "__main__":'
_FEEDS = ("feed_data", "feed")


class ScriptGlobals(dict):
    """A script's globals after `script_globals` ran it, with the script's path: where
    `find_graph` looks when the globals hold no graph."""

    def __init__(self, namespace: Mapping[str, Any], script: str):
        super().__init__(namespace)
        self.script = script


def find_graph(namespace: Mapping[str, Any], name: str | None, graph_types: tuple[type, ...]) -> Any:
    """The graph among a script's globals: the one named `name`, else the only one there is.
    For the globals of a script (`script_globals`) that hold none, the graph the script builds
    when it runs as __main__ (see the module docstring)."""
    graphs = {key: value for key, value in namespace.items() if isinstance(value, graph_types)}
    kinds = " or ".join(t.__name__ for t in graph_types)
    if not graphs and isinstance(namespace, ScriptGlobals):
        return _graph_built_by_main(namespace.script, name, graph_types)
    if name is not None:
        if name not in graphs:
            found = f"; it defines {', '.join(sorted(graphs))}" if graphs else ""
            raise GeError(f"the script has no {kinds} named {name!r}{found}")
        return graphs[name]
    if len(graphs) != 1:
        if not graphs:
            raise GeError(f"the script defines no {kinds} among its globals")
        raise GeError(f"the script defines {len(graphs)} graphs ({', '.join(sorted(graphs))}); "
                      f"choose one with --graph NAME")
    return next(iter(graphs.values()))


def script_globals(script: str) -> ScriptGlobals:
    """The globals of `script` after running it (not as __main__), its folder first on sys.path.
    Default names start afresh, so its graph is named as when the script runs on its own."""
    if not os.path.isfile(script):
        raise GeError(f"script {script!r} does not exist")
    names.reset()
    with _script_folder_on_path(script):
        return ScriptGlobals(runpy.run_path(script, run_name="__dfir_compile__"), script)


def has_main_block(script: str) -> bool:
    """Whether `script` has a top-level `if __name__ == "__main__":` (either way round)."""
    with open(script, encoding="utf-8") as file:
        tree = ast.parse(file.read(), script)
    return any(isinstance(node, ast.If) and _is_main_test(node.test) for node in tree.body)


def no_graph_message(kinds: str, ran_main: bool) -> str:
    """What a script that exposes no graph is told: what was looked at and how to expose one."""
    looked = ("and builds none when run as __main__" if ran_main
              else f"and has no `{MAIN_BLOCK}` block that builds one")
    return (f"the script defines no {kinds} among its globals {looked}; expose one: assign it to a "
            f"module-level name (graph = df.FlowGraph([...])), or build it in main() (or any function) "
            f"called under `{MAIN_BLOCK}` and feed it there (it is taken at its first feed)")


def _graph_built_by_main(script: str, name: str | None, graph_types: tuple[type, ...]) -> Any:
    """The graph `script` feeds first when run as __main__ (the one named `name`, if given, among
    those it built), else the only one it built."""
    kinds = " or ".join(t.__name__ for t in graph_types)
    if not has_main_block(script):
        raise GeError(no_graph_message(kinds, ran_main=False))
    built, fed = _run_as_main(script, graph_types)
    if not built:
        raise GeError(no_graph_message(kinds, ran_main=True))
    if name is not None:
        named = [graph for graph in built if getattr(graph, "name", None) == name]
        if not named:
            found = ", ".join(sorted(str(getattr(graph, "name", "?")) for graph in built))
            raise GeError(f"the script builds no {kinds} named {name!r} when run as __main__; it builds {found}")
        return named[0]
    if fed is not None:
        return fed
    if len(built) != 1:
        found = ", ".join(str(getattr(graph, "name", "?")) for graph in built)
        raise GeError(f"the script builds {len(built)} graphs when run as __main__ ({found}) and feeds "
                      f"none; choose one with --graph NAME")
    return built[0]


class _FirstFeed(BaseException):
    """Stops a script at its first feed (a BaseException: the script's `except Exception` lets it by)."""

    def __init__(self, graph: Any):
        super().__init__("the script's first feed")
        self.graph = graph


def _run_as_main(script: str, graph_types: tuple[type, ...]) -> tuple[list[Any], Any]:
    """Run `script` as __main__ until its first feed: the graphs it built, in order, and the one
    it fed (None if it fed none). The session starts afresh, as for a script run on its own."""
    session.finalize()
    built: list[Any] = []
    fed = None
    with _script_folder_on_path(script), _argv([script]), _recording(graph_types, built):
        try:
            runpy.run_path(script, run_name="__main__")
        except _FirstFeed as stop:
            fed = stop.graph
        except SystemExit as exit_:
            if exit_.code not in (None, 0) and not built:
                raise GeError(f"the script exited with status {exit_.code} before it built a graph") from None
    return built, fed


@contextmanager
def _recording(graph_types: tuple[type, ...], built: list[Any]) -> Iterator[None]:
    """While the block runs, each graph of `graph_types` made is added to `built`, and the first
    feed of one raises `_FirstFeed`; the classes are as they were afterwards."""
    saved = [(cls, attr, cls.__dict__[attr]) for cls in graph_types
             for attr in ("__init__", *_FEEDS) if attr in cls.__dict__]
    try:
        for cls, attr, original in saved:
            setattr(cls, attr, _recorded_init(original, built) if attr == "__init__" else _stopping_feed(original))
        yield
    finally:
        for cls, attr, original in saved:
            setattr(cls, attr, original)


def _recorded_init(init, built: list[Any]):
    @functools.wraps(init)
    def recorded(self, *args, **kwargs):
        init(self, *args, **kwargs)
        built.append(self)
    return recorded


def _stopping_feed(feed):
    @functools.wraps(feed)
    def stopping(self, *args, **kwargs):
        raise _FirstFeed(self)
    return stopping


@contextmanager
def _script_folder_on_path(script: str) -> Iterator[None]:
    folder = os.path.dirname(os.path.abspath(script))
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        if folder in sys.path:
            sys.path.remove(folder)


@contextmanager
def _argv(argv: list[str]) -> Iterator[None]:
    saved = sys.argv
    sys.argv = argv
    try:
        yield
    finally:
        sys.argv = saved


def _is_main_test(test: ast.expr) -> bool:
    """`__name__ == "__main__"` or `"__main__" == __name__`."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = {ast.dump(test.left), ast.dump(test.comparators[0])}
    return sides == {ast.dump(ast.Name("__name__", ast.Load())), ast.dump(ast.Constant("__main__"))}
