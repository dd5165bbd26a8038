"""One self-contained HTML page of scenes: inline SVG drawings, style, script and the scenes'
data as JSON, so the page opens without a network.

Each diagram is a `<section class="diagram" id=...>` holding its SVG; the drawings that a node
expands to (GE graphs, sub-FlowGraphs, invoked closures) start hidden. The JSON (`#dfir-scene`) holds every box's
label, kind, attributes, `loc` and the text of its source line when the file is found; with a
trace's times, each `df.node` box's times (`trace`: null when the trace has no slices for it) and
the trace's totals.
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
from dfir.tools.trace_times import Durations, TraceTimes, a_few


def page_html(title: str, scenes: Sequence[Scene], source_folders: Sequence[str],
              times: TraceTimes | None = None) -> str:
    """The page of `scenes`, its nodes coloured by `times` when given; source lines are looked
    up under `source_folders`, in order."""
    diagrams = [diagram for scene in scenes for diagram in scene.diagrams]
    expanded = {target for diagram in diagrams for box in diagram.boxes for target in box.expands}
    timed = {d.id for scene in timed_scenes(scenes, times) for d in scene.diagrams}
    times_of = {d.id: times if d.id in timed else None for d in diagrams}
    data = {"title": title,
            "diagrams": {d.id: _diagram_data(d, source_folders, times_of[d.id]) for d in diagrams}}
    if times is not None:
        data["trace"] = _trace_data(times, [d for d in diagrams if d.id in timed])
    sections = "\n".join(_section(d, d.id in expanded, times_of[d.id]) for d in diagrams)
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
attributes, double-click a GE graph or sub-FlowGraph to expand it</p>{_trace_line(data.get("trace"))}
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


def timed_scenes(scenes: Sequence[Scene], times: TraceTimes | None) -> list[Scene]:
    """The scenes a trace's times colour: a bundle's member the trace's model is, else all."""
    if times is None:
        return []
    members = [scene for scene in scenes if scene.model is not None and scene.model == times.model]
    return members or list(scenes)


def _section(diagram: Diagram, hidden: bool, times: TraceTimes | None) -> str:
    attrs = "".join(f"<dt>{html.escape(name)}</dt><dd>{html.escape(value)}</dd>"
                    for name, value in diagram.attrs.items())
    collapse = '<button class="collapse">collapse</button>' if hidden else ""
    return (f'<section class="diagram" id="{diagram.id}" data-kind="{diagram.kind}"{" hidden" if hidden else ""}>\n'
            f'<h2>{html.escape(diagram.title)}<button class="zoom">actual size</button>{collapse}</h2>\n'
            f'<dl class="attrs">{attrs}</dl>\n'
            f'<div class="canvas">{diagram_svg(diagram, times)}</div>\n</section>')


def _diagram_data(diagram: Diagram, source_folders: Sequence[str], times: TraceTimes | None) -> dict:
    return {"title": diagram.title, "kind": diagram.kind, "attrs": diagram.attrs,
            "boxes": {box.id: _box_data(box, source_folders, times) for box in diagram.boxes},
            "edges": {edge.id: {"tail": edge.tail, "head": edge.head, "label": edge.label}
                      for edge in diagram.edges},
            "clusters": [cluster.label for cluster in diagram.clusters.values()]}


def _box_data(box: Box, source_folders: Sequence[str], times: TraceTimes | None) -> dict:
    data = {"label": box.label, "kind": box.kind, "attrs": box.attrs, "loc": box.loc,
            "source": _source_line(box.loc, source_folders), "expands": list(box.expands)}
    if times is not None and box.node is not None:
        data["trace"] = _node_trace(box, times)
    return data


def _node_trace(box: Box, times: TraceTimes) -> dict | None:
    """A node box's times: its node's, summed over instances, and a replica's own."""
    node = times.nodes.get(box.node)
    if node is None:
        return None
    data = {"share": round(node.share, 6), **_durations_data(node.times), "instances": len(node.instances)}
    if box.instance is not None:
        mine = node.instances.get(box.instance)
        data["instance"] = None if mine is None else {"index": box.instance, **_durations_data(mine)}
    return data


def _durations_data(times: Durations) -> dict:
    return {"calls": times.calls, "total_ms": round(times.total_ms, 3), "p50_ms": round(times.p50_ms, 3),
            "p99_ms": round(times.p99_ms, 3), "max_ms": round(times.max_ms, 3)}


def _trace_data(times: TraceTimes, diagrams: Sequence[Diagram]) -> dict:
    return {"file": os.path.basename(times.path), "model": times.model, "slices": times.slices,
            "total_ms": round(times.total_ms, 3), "top_share": round(times.top_share, 6),
            "not_drawn": _not_drawn(times, diagrams)}


def _not_drawn(times: TraceTimes, diagrams: Sequence[Diagram]) -> list[str]:
    """The trace's nodes that no box of `diagrams` draws."""
    drawn = {box.node for diagram in diagrams for box in diagram.boxes}
    return [node for node in times.nodes if node not in drawn]


def _trace_line(trace: dict | None) -> str:
    """The header's line on the trace (`_trace_data`) the nodes are coloured by ("" without one)."""
    if trace is None:
        return ""
    model = "" if trace["model"] is None else f" (model {trace['model']!r})"
    text = (f"colours: time in node from trace {trace['file']}{model}, {trace['slices']} node slices, "
            f"{trace['total_ms']:.3f} ms in all; click a node for its times")
    if trace["not_drawn"]:
        text += f"; not in this graph: {a_few(trace['not_drawn'])}"
    return f'\n<p class="trace">{html.escape(text)}</p>'


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
