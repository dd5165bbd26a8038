"""How `dfir view` grows with graph size, beside the compile that made the `.om` it reads.

For chains and wide DAGs (those of compile_scaling.py), compiles each graph with `dfir.compile`
(the baseline: what a user waited for already), saves it, then draws the `.om` with `dfir view`
and, apart, times Graphviz's layout of the top-level graph alone. Prints seconds and the ratio
view / compile. Run: python benchmarks/view_scaling.py [--sizes 100,1000] [--smoke]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import dfir
from compile_scaling import chain, wide
from dfir.frontend.dataflow import names
from dfir.tools.view import view
from dfir.tools.view.layout import diagram_svg
from dfir.tools.view.scene import scene_of
from dfir.tools.view.sources import read_sources


def measure(shape: str, size: int, folder: Path) -> dict[str, float]:
    names.reset()
    graph, _ = (chain if shape == "chain" else wide)(size)
    start = time.perf_counter()
    path = dfir.compile(graph).save(folder / f"{shape}_{size}")
    compiled = time.perf_counter() - start
    start = time.perf_counter()
    view(path, str(folder / f"{shape}_{size}.html"))
    drawn = time.perf_counter() - start
    top = scene_of(read_sources(path)[0].module, path).diagrams[0]
    start = time.perf_counter()
    diagram_svg(top)
    layout = time.perf_counter() - start
    return {"boxes": len(top.boxes), "compile": compiled, "view": drawn, "dot": layout}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000", help="comma-separated node counts")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, to check the script runs")
    args = parser.parse_args()
    sizes = [10] if args.smoke else [int(s) for s in args.sizes.split(",")]
    print(f"{'graph':>12} {'boxes':>6} {'compile s':>10} {'view s':>8} {'dot s':>7} {'view/compile':>13}")
    with tempfile.TemporaryDirectory() as folder:
        for shape in ("chain", "wide"):
            for size in sizes:
                row = measure(shape, size, Path(folder))
                print(f"{shape + ' ' + str(size):>12} {row['boxes']:>6} {row['compile']:>10.2f} {row['view']:>8.2f} "
                      f"{row['dot']:>7.2f} {row['view'] / row['compile']:>13.2f}")


if __name__ == "__main__":
    main()
