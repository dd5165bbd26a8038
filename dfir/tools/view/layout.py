"""A diagram laid out by Graphviz `dot` (through the `graphviz` package) into SVG.

Each box becomes an SVG group `<g id="d0_n3" class="node box kind_node">`, each edge `<g id="d0_e2"
class="edge">` and each cluster `<g id="d0_c1" class="cluster device">`, so the page's script finds
them by the diagram's ids.
"""
from __future__ import annotations

import subprocess

import graphviz

from dfir.core.errors import GeError
from dfir.tools.view.scene import Box, Cluster, Diagram

# shape and fill of each kind of box
_STYLES = {
    "data": {"shape": "ellipse", "fillcolor": "#e3f2fd"},
    "node": {"shape": "box", "fillcolor": "#fff8e1"},
    "graph": {"shape": "box3d", "fillcolor": "#e8f5e9"},
    "gather": {"shape": "circle", "fillcolor": "#eeeeee", "width": "0.25", "fixedsize": "true", "label": ""},
    "output": {"shape": "house", "fillcolor": "#fce4ec"},
    "op": {"shape": "box", "fillcolor": "#f3e5f5"},
}


def diagram_svg(diagram: Diagram) -> str:
    """The SVG element of `diagram` laid out by dot (without the XML prologue)."""
    try:
        svg = _digraph(diagram).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise GeError("dfir view lays graphs out with Graphviz's dot, which is not installed "
                      "(Debian: apt-get install graphviz)") from None
    except subprocess.CalledProcessError as error:
        stderr = error.stderr.decode(errors="replace") if isinstance(error.stderr, bytes) else error.stderr
        raise GeError(f"Graphviz's dot failed on {diagram.title} (exit status {error.returncode}): "
                      f"{(stderr or '').strip()}") from None
    return svg[svg.index("<svg"):]


def _digraph(diagram: Diagram) -> graphviz.Digraph:
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
    _fill(graph, None, children, members, cluster_ids)
    for edge in diagram.edges:
        graph.edge(edge.tail, edge.head, label=_escaped(edge.label), id=edge.id)
    return graph


def _fill(graph: graphviz.Digraph, cluster: str | None, children: dict[str | None, list[Cluster]],
          members: dict[str | None, list[Box]], cluster_ids: dict[str, str]) -> None:
    """Add the boxes of `cluster` and its nested clusters to `graph`."""
    for box in members.get(cluster, ()):
        classes = f"box kind_{box.kind}" + (" expandable" if box.expands else "")
        graph.node(box.id, **{"label": _escaped(box.label), "id": box.id, "class": classes, **_STYLES[box.kind]})
    for child in children.get(cluster, ()):
        with graph.subgraph(name=f"cluster_{cluster_ids[child.id]}") as sub:
            sub.attr(label=_escaped(child.label), id=cluster_ids[child.id], style="rounded,dashed",
                     color="#90a4ae", **{"class": "device" if child.parent else "server"})
            _fill(sub, child.id, children, members, cluster_ids)


def _escaped(text: str) -> str:
    """`text` as a dot label: literal (never an HTML label), newlines as line breaks."""
    return graphviz.nohtml(text.replace("\\", "\\\\").replace("\n", "\\n"))
