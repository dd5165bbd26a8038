"""`dfir view`: draw a pipeline for a browser.

    dfir view MODEL.om | IR.mlir | SCRIPT.py -o graph.html [--format html|svg] [--graph NAME]
              [--trace run.json [--trace-model NAME]]

`sources` reads the module, `scene` turns its graphs into diagrams (nodes, edges, device
clusters), `layout` lays each out with Graphviz `dot`, `page` puts them in one HTML file.
`dfir.tools.trace_times` reads a trace's time per node, which colours the nodes.
"""
from __future__ import annotations

import os

from dfir.core.errors import GeError
from dfir.tools.view.layout import diagram_svg
from dfir.tools.view.page import page_html, timed_scenes
from dfir.tools.view.scene import Diagram, scene_of
from dfir.tools.view.sources import read_sources
from dfir.tools.trace_times import TraceTimes, read_trace_times, require_shared_nodes

FORMATS = ("html", "svg")


def view(path: str, output: str, fmt: str = "html", graph_name: str | None = None,
         trace: str | None = None, trace_model: str | None = None) -> int:
    """Write the drawing of the model, IR or script at `path` to `output`; returns the number
    of graphs drawn. `html` is the interactive page; `svg` the top-level graph alone. With
    `trace` (a trace file; `trace_model` picks one model of several), nodes are coloured by
    their share of the time in nodes and list their times (on a bundle's page, the nodes of the
    member the trace's model is, if one is)."""
    if fmt not in FORMATS:
        raise GeError(f"dfir view: unknown format {fmt!r}, expected one of {list(FORMATS)}")
    if trace_model is not None and trace is None:
        raise GeError("dfir view: --trace-model picks a model of a trace; give the trace with --trace FILE")
    times = None if trace is None else read_trace_times(trace, trace_model)
    sources = read_sources(path, graph_name)
    scenes = [scene_of(source.module, source.title, f"m{index}" if len(sources) > 1 else "", source.model)
              for index, source in enumerate(sources)]
    if fmt == "svg":
        tops = [scene.diagrams[0] for scene in scenes]
        if len(tops) != 1:
            raise GeError(f"dfir view --format svg draws one graph; {path!r} holds {len(tops)} models "
                          f"(the html page shows them all)")
        _require_traced(times, tops)
        text, count = diagram_svg(tops[0], times) + "\n", 1
    else:
        _require_traced(times, [diagram for scene in timed_scenes(scenes, times) for diagram in scene.diagrams])
        folders = [os.path.dirname(os.path.abspath(path)), os.getcwd()]
        text = page_html(os.path.basename(path), scenes, folders, times)
        count = sum(len(scene.diagrams) for scene in scenes)
    with open(output, "w", encoding="utf-8") as file:
        file.write(text)
    return count


def _require_traced(times: TraceTimes | None, diagrams: list[Diagram]) -> None:
    """A GeError unless the trace, if any, times a node the diagrams draw."""
    if times is not None:
        require_shared_nodes(times, [box.node for diagram in diagrams for box in diagram.boxes if box.node])
