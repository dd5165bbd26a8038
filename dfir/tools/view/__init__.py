"""`dfir view`: draw a pipeline for a browser.

    dfir view MODEL.om | IR.mlir | SCRIPT.py -o graph.html [--format html|svg] [--graph NAME]

`sources` reads the module, `scene` turns its graphs into diagrams (nodes, edges, device
clusters), `layout` lays each out with Graphviz `dot`, `page` puts them in one HTML file.
"""
from __future__ import annotations

import os

from dfir.core.errors import GeError
from dfir.tools.view.layout import diagram_svg
from dfir.tools.view.page import page_html
from dfir.tools.view.scene import scene_of
from dfir.tools.view.sources import read_sources

FORMATS = ("html", "svg")


def view(path: str, output: str, fmt: str = "html", graph_name: str | None = None) -> int:
    """Write the drawing of the model, IR or script at `path` to `output`; returns the number
    of graphs drawn. `html` is the interactive page; `svg` the top-level graph alone."""
    if fmt not in FORMATS:
        raise GeError(f"dfir view: unknown format {fmt!r}, expected one of {list(FORMATS)}")
    sources = read_sources(path, graph_name)
    scenes = [scene_of(source.module, source.title, f"m{index}" if len(sources) > 1 else "")
              for index, source in enumerate(sources)]
    if fmt == "svg":
        tops = [scene.diagrams[0] for scene in scenes]
        if len(tops) != 1:
            raise GeError(f"dfir view --format svg draws one graph; {path!r} holds {len(tops)} models "
                          f"(the html page shows them all)")
        text, count = diagram_svg(tops[0]) + "\n", 1
    else:
        folders = [os.path.dirname(os.path.abspath(path)), os.getcwd()]
        text = page_html(os.path.basename(path), scenes, folders)
        count = sum(len(scene.diagrams) for scene in scenes)
    with open(output, "w", encoding="utf-8") as file:
        file.write(text)
    return count
