"""One self-contained HTML page of scenes: inline SVG drawings, style, script and the scenes'
data as JSON, so the page opens without a network.

Each diagram is a `<section class="diagram" id=...>` holding its SVG; the drawings that a node
expands to (GE graphs, sub-FlowGraphs, invoked closures) start hidden. The JSON (`#dfir-scene`) holds every box's
label, kind, attributes, `loc` and the text of its source line when the file is found.
"""
from __future__ import annotations

import html
import json
import linecache
import os
from importlib.resources import files
from typing import Sequence

from dfir.tools.view.layout import diagram_svg
from dfir.tools.view.scene import Box, Diagram, Scene


def page_html(title: str, scenes: Sequence[Scene], source_folders: Sequence[str]) -> str:
    """The page of `scenes`; source lines are looked up under `source_folders`, in order."""
    diagrams = [diagram for scene in scenes for diagram in scene.diagrams]
    expanded = {target for diagram in diagrams for box in diagram.boxes for target in box.expands}
    data = {"title": title,
            "diagrams": {d.id: _diagram_data(d, source_folders) for d in diagrams}}
    sections = "\n".join(_section(d, hidden=d.id in expanded) for d in diagrams)
    count = len(diagrams)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>dfir view: {html.escape(title)}</title>
<style>
{_asset("view.css")}</style>
</head>
<body>
<header><h1>{html.escape(title)}</h1><p>{count} graph{"" if count == 1 else "s"}; click a node to see its
attributes, double-click a GE graph or sub-FlowGraph to expand it</p>
<input id="find" type="search" placeholder="find nodes by name" aria-label="find nodes by name"></header>
<main>
<div id="diagrams">
{sections}
</div>
<aside id="details"><p class="hint">Click a node to see its attributes and source line.</p></aside>
</main>
<script type="application/json" id="dfir-scene">{_script_json(data)}</script>
<script>
{_asset("view.js")}</script>
</body>
</html>
"""


def _section(diagram: Diagram, hidden: bool) -> str:
    attrs = "".join(f"<dt>{html.escape(name)}</dt><dd>{html.escape(value)}</dd>"
                    for name, value in diagram.attrs.items())
    collapse = '<button class="collapse">collapse</button>' if hidden else ""
    return (f'<section class="diagram" id="{diagram.id}" data-kind="{diagram.kind}"{" hidden" if hidden else ""}>\n'
            f'<h2>{html.escape(diagram.title)}<button class="zoom">actual size</button>{collapse}</h2>\n'
            f'<dl class="attrs">{attrs}</dl>\n'
            f'<div class="canvas">{diagram_svg(diagram)}</div>\n</section>')


def _diagram_data(diagram: Diagram, source_folders: Sequence[str]) -> dict:
    return {"title": diagram.title, "kind": diagram.kind, "attrs": diagram.attrs,
            "boxes": {box.id: _box_data(box, source_folders) for box in diagram.boxes},
            "edges": {edge.id: {"tail": edge.tail, "head": edge.head, "label": edge.label}
                      for edge in diagram.edges},
            "clusters": [cluster.label for cluster in diagram.clusters.values()]}


def _box_data(box: Box, source_folders: Sequence[str]) -> dict:
    return {"label": box.label, "kind": box.kind, "attrs": box.attrs, "loc": box.loc,
            "source": _source_line(box.loc, source_folders), "expands": list(box.expands)}


def _source_line(loc: str | None, folders: Sequence[str]) -> str | None:
    """The text of line `path:line` of `loc`, from the first folder that has the file."""
    if loc is None:
        return None
    path, _, line = loc.rpartition(":")
    if not line.isdigit():
        return None
    for folder in folders:
        candidate = os.path.join(folder, path)
        if os.path.isfile(candidate):
            return linecache.getline(candidate, int(line)).strip() or None
    return None


def _script_json(data: dict) -> str:
    """`data` as JSON that cannot end the <script> element holding it."""
    return json.dumps(data, sort_keys=True).replace("</", "<\\/")


def _asset(name: str) -> str:
    return files("dfir.tools.view").joinpath(name).read_text(encoding="utf-8")
