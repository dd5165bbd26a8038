"""A diagram laid out by Graphviz `dot` (through the `graphviz` package) into SVG.

Each box becomes an SVG group `<g id="d0_n3" class="node box kind_node">`, each edge `<g id="d0_e2"
class="edge">` and each cluster `<g id="d0_c1" class="cluster device">`, so the page's script finds
them by the diagram's ids.

With a trace's times (`dfir.tools.trace_times`), each `df.node` box is filled by its node's share of all
node time on a sequential scale (pale yellow to dark red, 0 to the largest share), says its share
under its name and lists its times in its tooltip; a box the trace has no slices for keeps its
look and says so in its tooltip. A flow graph's legend, below it, shows the scale.
"""
from __future__ import annotations

import html
import subprocess

import graphviz

from dfir.core.errors import GeError
from dfir.tools.view.scene import Box, Cluster, Diagram
from dfir.tools.trace_times import Durations, TraceTimes

# shape and fill of each kind of box
_STYLES = {
    "data": {"shape": "ellipse", "fillcolor": "#e3f2fd"},
    "node": {"shape": "box", "fillcolor": "#fff8e1"},
    "graph": {"shape": "box3d", "fillcolor": "#e8f5e9"},
    "gather": {"shape": "circle", "fillcolor": "#eeeeee", "width": "0.25", "fixedsize": "true", "label": ""},
    "output": {"shape": "house", "fillcolor": "#fce4ec"},
    "op": {"shape": "box", "fillcolor": "#f3e5f5"},
}
# ColorBrewer's YlOrRd: a sequential scale that reads as more time the darker it gets
SCALE = ("#ffffcc", "#ffeda0", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#bd0026", "#800026")
DARK_FROM = 0.7  # from this point of the scale on, text is white
LEGEND_TITLE = "time in node, % of all node time"
NO_SLICES = "no slices in the trace"


def diagram_svg(diagram: Diagram, times: TraceTimes | None = None) -> str:
    """The SVG element of `diagram` laid out by dot (without the XML prologue), its nodes
    coloured by `times` when given."""
    try:
        svg = _digraph(diagram, times).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise GeError("dfir view lays graphs out with Graphviz's dot, which is not installed "
                      "(Debian: apt-get install graphviz)") from None
    except subprocess.CalledProcessError as error:
        stderr = error.stderr.decode(errors="replace") if isinstance(error.stderr, bytes) else error.stderr
        raise GeError(f"Graphviz's dot failed on {diagram.title} (exit status {error.returncode}): "
                      f"{(stderr or '').strip()}") from None
    return svg[svg.index("<svg"):]


def _digraph(diagram: Diagram, times: TraceTimes | None) -> graphviz.Digraph:
    graph = graphviz.Digraph(diagram.id, graph_attr={"rankdir": "TB", "newrank": "true", "fontname": "Helvetica", "fontsize": "11",
                                                     "id": f"{diagram.id}_graph", "class": f"diagram {diagram.kind}"},
                             node_attr={"style": "filled", "fontname": "Helvetica", "fontsize": "11"},
                             edge_attr={"fontname": "Helvetica", "fontsize": "9", "color": "#607d8b"})
    children: dict[str | None, list[Cluster]] = {}
    for cluster in diagram.clusters.values():
        children.setdefault(cluster.parent, []).append(cluster)
    members: dict[str | None, list[Box]] = {}
    for box in diagram.boxes:
        members.setdefault(box.cluster, []).append(box)
    cluster_ids = {cluster.id: f"{diagram.id}_c{index}" for index, cluster in enumerate(diagram.clusters.values())}
    _fill(graph, None, children, members, cluster_ids, times)
    for edge in diagram.edges:
        graph.edge(edge.tail, edge.head, label=_escaped(edge.label), id=edge.id)
    if times is not None and any(box.node is not None for box in diagram.boxes):
        graph.attr(label=_legend(times), labelloc="b")
    return graph


def _fill(graph: graphviz.Digraph, cluster: str | None, children: dict[str | None, list[Cluster]],
          members: dict[str | None, list[Box]], cluster_ids: dict[str, str], times: TraceTimes | None) -> None:
    """Add the boxes of `cluster` and its nested clusters to `graph`."""
    for box in members.get(cluster, ()):
        classes = f"box kind_{box.kind}" + (" expandable" if box.expands else "")
        traced = _traced_style(box, times) if times is not None and box.node is not None else {}
        graph.node(box.id, **{"label": _escaped(box.label), "id": box.id, "class": classes, **_STYLES[box.kind],
                              **traced})
    for child in children.get(cluster, ()):
        with graph.subgraph(name=f"cluster_{cluster_ids[child.id]}") as sub:
            sub.attr(label=_escaped(child.label), id=cluster_ids[child.id], style="rounded,dashed",
                     color="#90a4ae", **{"class": "device" if child.parent else "server"})
            _fill(sub, child.id, children, members, cluster_ids, times)


# -- trace overlay -----------------------------------------------------------------------------

def scale_colour(share: float, top: float) -> str:
    """The colour of `share` on the scale from 0 (its first colour) to `top` (its last)."""
    point = min(share / top, 1.0) * (len(SCALE) - 1) if top > 0 else 0.0
    low = min(int(point), len(SCALE) - 2)
    mix = point - low
    ends = [[int(colour[i:i + 2], 16) for i in (1, 3, 5)] for colour in SCALE[low:low + 2]]
    return "#" + "".join(f"{round(a + (b - a) * mix):02x}" for a, b in zip(*ends))


def _text_colour(share: float, top: float) -> str:
    return "white" if top > 0 and share / top >= DARK_FROM else "black"


def _traced_style(box: Box, times: TraceTimes) -> dict[str, str]:
    """A node box's fill, share line and tooltip from the trace (a hint if it has no slices)."""
    node = times.nodes.get(box.node)
    if node is None:
        return {"tooltip": _escaped(NO_SLICES)}
    lines = [f"{node.node}: {node.share:.1%} of all node time", _durations_text(node.times),
             f"instances {len(node.instances)}"]
    if box.instance is not None:
        mine = node.instances.get(box.instance)
        lines.append(f"instance {box.instance}: " + (NO_SLICES if mine is None else _durations_text(mine)))
    return {"label": _escaped(f"{box.label}\n{node.share:.1%} of node time"),
            "fillcolor": scale_colour(node.share, times.top_share),
            "fontcolor": _text_colour(node.share, times.top_share), "tooltip": _escaped("\n".join(lines))}


def _durations_text(times: Durations) -> str:
    """`calls 3, total 1.500 ms, p50 0.500 ms, p99 0.600 ms, max 0.600 ms`."""
    return (f"calls {times.calls}, total {times.total_ms:.3f} ms, p50 {times.p50_ms:.3f} ms, "
            f"p99 {times.p99_ms:.3f} ms, max {times.max_ms:.3f} ms")


def _legend(times: TraceTimes) -> str:
    """The graph's label: the scale's title over swatches from 0 to the largest share."""
    top = times.top_share
    stops = [top * step / 5 for step in range(6)]
    cells = "".join(f'<TD BGCOLOR="{scale_colour(share, top)}" WIDTH="48">'
                    f'<FONT COLOR="{_text_colour(share, top)}">{share:.1%}</FONT></TD>' for share in stops)
    return (f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="3">'
            f'<TR><TD COLSPAN="{len(stops)}">{html.escape(LEGEND_TITLE)}</TD></TR><TR>{cells}</TR></TABLE>>')


def _escaped(text: str) -> str:
    """`text` as a dot label: literal (never an HTML label), newlines as line breaks."""
    return graphviz.nohtml(text.replace("\\", "\\\\").replace("\n", "\\n"))
