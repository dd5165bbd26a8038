"""The `dfir` command: compile a graph script to `.om`, inspect an `.om`, run an `.om`.

    dfir exec SCRIPT.py [ARGS ...]
    dfir trace SCRIPT.py [ARGS ...] -o run.json [--rate R]
    dfir compile SCRIPT.py -o model.om [--graph NAME] [--option KEY=VALUE ...]
    dfir inspect model.om | dfir inspect --stats run.json [--trace-model NAME]
    dfir view MODEL.om|IR.mlir|SCRIPT.py -o graph.html [--format html|svg] [--graph NAME] [--trace RUN.json]
    dfir run model.om --input NAME=FILE.npy ... [--output-dir DIR] [--timeout MS]
    dfir cache ls|verify|prune DIR [--keep N]
    dfir udf new NAME [--lang python|cpp] [--dir PARENT]
    dfir deploy template SCRIPT.py -o deploy.json [--graph NAME] [--device 0:0:0:0]
    dfir keygen -o NAME
    dfir trust ls | add KEY.pub.pem ... | rm FINGERPRINT | export [-o FILE]

`dfir exec` runs a GE DataFlow script unchanged (`import dataflow` resolves to dfir's modules,
dfir.core.ge_aliases); `dfir trace` runs one so too, its models traced, and writes one trace file
(docs/tracing.md). `dfir compile`, `view` and `deploy template` resolve those names too when
they run a script. `dfir compile` signs with the key env DFIR_SIGNING_KEY names, else with the
user's own key; `dfir run` runs only files a trusted key signed (the own key, DFIR_TRUSTED_KEYS'
and those `dfir trust add` added), unless env DFIR_TRUST=any (docs/security.md).

Thin: it parses arguments and calls the library. A GeError prints ``error: <message>`` on
stderr and exits with status 1.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

import numpy as np

from dfir.core import ge_aliases
from dfir.core.errors import GeError
from dfir.frontend.udf.scaffold import new_project
from dfir.om.keys import write_key_pair
from dfir.runtime.driver import loader
from dfir.tools.deploy_template import write_deploy_template
from dfir.tools.exec_script import exec_script
from dfir.tools.inspect_om import inspect_om
from dfir.tools.scripts import find_graph, script_globals
from dfir.tools.trace_cli import add_trace_command
from dfir.tools.trace_times import read_trace_times, stats_table
from dfir.tools.trust_cli import add_trust_commands

# The commands that build, compile, cache or draw graphs import the compiler when they run (`# lazy:`
# below): `dfir run`, `inspect`, `keygen` and `trust` import no xDSL and no compiler module.


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `dfir` command line `argv` (default: sys.argv[1:]); returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return args.command(args)
    except GeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dfir", description="Compile, inspect and run dfir .om models.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    exec_cmd = commands.add_parser("exec", help="run a GE DataFlow script as written (import dataflow ...)")
    exec_cmd.add_argument("script", help="the Python script, run as __main__")
    exec_cmd.add_argument("args", nargs=argparse.REMAINDER, help="its arguments (sys.argv[1:])")
    exec_cmd.set_defaults(command=_exec)
    add_trace_command(commands)

    compile_cmd = commands.add_parser("compile", help="compile the graph a Python script builds into an .om")
    compile_cmd.add_argument("script", help="a Python script that builds a FlowGraph or GE Graph")
    compile_cmd.add_argument("-o", "--output", required=True, help="the .om file to write")
    compile_cmd.add_argument("--graph", help="the global variable holding the graph (when there are several)")
    compile_cmd.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                             help="a compile option, e.g. ge.graph_key=demo (repeatable)")
    compile_cmd.set_defaults(command=_compile)

    inspect_cmd = commands.add_parser("inspect", help="print the header, partitions and plan of an .om, "
                                                      "or with --stats the per-node times of a trace")
    inspect_cmd.add_argument("model", help="the .om file (with --stats: a trace file, dfir trace's)")
    inspect_cmd.add_argument("--stats", action="store_true",
                             help="print each node's calls, p50/p99/max and share of the trace file given")
    inspect_cmd.add_argument("--trace-model", metavar="NAME", help="with --stats: the model, in a trace of several")
    inspect_cmd.set_defaults(command=_inspect)

    view_cmd = commands.add_parser("view", help="draw a model, IR or script's graph as an HTML page or SVG")
    view_cmd.add_argument("source", help="an .om model, an .mlir IR file or a Python script building a graph")
    view_cmd.add_argument("-o", "--output", required=True, help="the file to write (graph.html, graph.svg)")
    view_cmd.add_argument("--format", default="html", help="html (interactive, the default) or svg")
    view_cmd.add_argument("--graph", help="the script's global holding the graph (when there are several)")
    view_cmd.add_argument("--trace", metavar="RUN.json",
                          help="colour the nodes by their time in this trace (dfir trace's file)")
    view_cmd.add_argument("--trace-model", metavar="NAME",
                          help="the model whose times count, in a trace of several models")
    view_cmd.set_defaults(command=_view)

    run_cmd = commands.add_parser("run", help="feed .npy inputs to an .om and print or save its outputs")
    run_cmd.add_argument("model", help="the .om file")
    run_cmd.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                         help="a graph input and the .npy file holding it (repeatable)")
    run_cmd.add_argument("--output-dir", help="save outputs as out_<i>.npy here instead of printing them")
    run_cmd.add_argument("--timeout", type=int, default=-1, metavar="MS",
                         help="fetch timeout in milliseconds (-1 waits forever)")
    run_cmd.set_defaults(command=_run)
    _add_cache_commands(commands)
    _add_udf_commands(commands)
    _add_deploy_commands(commands)

    keygen_cmd = commands.add_parser("keygen", help="write a new Ed25519 key pair for signing .om files")
    keygen_cmd.add_argument("-o", "--output", required=True, metavar="NAME",
                            help="writes NAME.pem (the private key, mode 0600) and NAME.pub.pem")
    keygen_cmd.set_defaults(command=_keygen)
    add_trust_commands(commands)
    return parser


def _exec(args: argparse.Namespace) -> int:
    return exec_script(args.script, args.args)


def _keygen(args: argparse.Namespace) -> int:
    private_path, public_path, key = write_key_pair(args.output)
    print(f"wrote {private_path} (private key: keep it secret; DFIR_SIGNING_KEY={private_path} signs)")
    print(f"wrote {public_path} (public key {key.fingerprint}; DFIR_TRUSTED_KEYS={public_path} trusts it)")
    return 0


def _add_deploy_commands(commands) -> None:
    deploy_cmd = commands.add_parser("deploy", help="work with deploy info files")
    actions = deploy_cmd.add_subparsers(required=True, metavar="ACTION")
    template_cmd = actions.add_parser("template",
                                      help="write a deploy info file that places every node of a FlowGraph")
    template_cmd.add_argument("script", help="a Python script that builds a FlowGraph")
    template_cmd.add_argument("-o", "--output", required=True, help="the deploy info file to write")
    template_cmd.add_argument("--graph",
                              help="the global variable holding the FlowGraph (when there are several)")
    template_cmd.add_argument("--device", default="0:0:0:0", metavar="DEVICES",
                              help="the logic_device_list of every node (default: 0:0:0:0)")
    template_cmd.set_defaults(command=_deploy_template)


def _deploy_template(args: argparse.Namespace) -> int:
    from dfir.frontend.dataflow.flow_graph import FlowGraph  # lazy: a graph's options import xDSL (see above)
    ge_aliases.install()  # the script may be a GE one: `import dataflow`
    graph = find_graph(script_globals(args.script), args.graph, (FlowGraph,))
    count = write_deploy_template(graph, args.output, args.device)
    print(f"wrote {args.output}: {count} node{'' if count == 1 else 's'} on {args.device}")
    return 0


def _add_udf_commands(commands) -> None:
    udf_cmd = commands.add_parser("udf", help="work with UDF projects")
    actions = udf_cmd.add_subparsers(required=True, metavar="ACTION")
    new_cmd = actions.add_parser("new", help="create a UDF project workspace from a template")
    new_cmd.add_argument("name", help="the project name: its folder, compile config and class")
    new_cmd.add_argument("--lang", choices=["python", "cpp"], default="python",
                         help="the UDF's language (default: python)")
    new_cmd.add_argument("--dir", default=".", metavar="PARENT",
                         help="where to create the project folder (default: here)")
    new_cmd.set_defaults(command=_udf_new)


def _udf_new(args: argparse.Namespace) -> int:
    written = new_project(args.name, args.lang, args.dir)
    print(f"created {args.lang} UDF project {os.path.join(args.dir, args.name)}:")
    for path in written:
        print(f"  {path}")
    return 0


def _add_cache_commands(commands) -> None:
    cache_cmd = commands.add_parser("cache", help="see, check and clean a compile cache directory")
    actions = cache_cmd.add_subparsers(required=True, metavar="ACTION")
    for name, command, text in (("ls", _cache_ls, "list the cached models and subgraph units per graph key"),
                                ("verify", _cache_verify, "check every cache file; exit status 1 if one is bad"),
                                ("prune", _cache_prune, "remove bad, unreferenced and leftover cache files")):
        action = actions.add_parser(name, help=text)
        action.add_argument("directory", help="the cache directory (ge.graph_compiler_cache_dir)")
        action.set_defaults(command=command)
        if name == "prune":
            action.add_argument("--keep", type=int, metavar="N",
                                help="keep only the N newest cached models of each key")


def _cache_ls(args: argparse.Namespace) -> int:
    from dfir.driver.cache.inventory import take_inventory  # lazy: the compile cache imports the compiler
    inventory = take_inventory(args.directory)
    for record in inventory.keys:
        unit_bytes = sum(u.size for u in record.units)
        print(f"{record.key}: {len(record.models)} cached models, {len(record.units)} subgraph units "
              f"({unit_bytes} bytes)")
        if record.index_problem:
            print(f"  index unreadable: {record.index_problem}")
        for model in record.models:
            print("  " + _model_line(model))
    for title, names in (("not in any index", inventory.strays), ("not cache files", inventory.unknown)):
        if names:
            print(f"{title}: {', '.join(names)}")
    return 0


def _model_line(model) -> str:
    if model.entry is None:
        return f"{model.where}: {model.problem}"
    entry = model.entry
    parts = [entry.cache_file_name, "missing" if model.size is None else f"{model.size} bytes",
             entry.fingerprint[:len("sha256:") + 16]]
    if entry.offline:
        parts.append("offline")
    if entry.var_desc_file_name:
        parts.append(f"variables {entry.var_desc_file_name}")
    return "  ".join(parts)


def _cache_verify(args: argparse.Namespace) -> int:
    from dfir.driver.cache.inventory import take_inventory  # lazy: the compile cache imports the compiler
    inventory = take_inventory(args.directory, verify=True)
    checked = bad = 0
    for record in inventory.keys:
        if record.index_problem:
            bad += 1
            print(f"BAD  {record.key}.idx: {record.index_problem}")
        files = [(m.entry.cache_file_name if m.entry else f"{record.key}.idx {m.where}", m.problem)
                 for m in record.models]
        files += [(f"{record.key}/{u.name}", u.problem) for u in record.units]
        for name, problem in files:
            checked += 1
            bad += problem is not None
            print(f"ok   {name}" if problem is None else f"BAD  {name}: {problem}")
    print(f"{checked} cache files checked, {bad} bad")
    return 1 if bad else 0


def _cache_prune(args: argparse.Namespace) -> int:
    from dfir.driver.cache.inventory import prune  # lazy: the compile cache imports the compiler
    removed = prune(args.directory, args.keep)
    for path in removed:
        print(f"removed {path}")
    print(f"removed {len(removed)} files")
    return 0


def _compile(args: argparse.Namespace) -> int:
    from dfir.driver import compiler  # lazy: the compiler and xDSL take a second to import (see above)
    from dfir.frontend.dataflow.flow_graph import FlowGraph  # lazy: a graph's options import xDSL
    from dfir.frontend.ge.graph import Graph  # lazy: the GE builder imports xDSL
    options = parse_options(args.option)
    ge_aliases.install()  # the script may be a GE one: `import dataflow`
    graph = find_graph(script_globals(args.script), args.graph, (FlowGraph, Graph))
    written = compiler.compile(graph, options, progress=True).save(args.output)
    print(f"wrote {written}")
    return 0


def _inspect(args: argparse.Namespace) -> int:
    if args.stats:
        sys.stdout.write(stats_table(read_trace_times(args.model, args.trace_model)))
    elif args.trace_model is not None:
        raise GeError("--trace-model is for --stats: it picks a model of a trace file")
    else:
        sys.stdout.write(inspect_om(args.model))
    return 0


def _view(args: argparse.Namespace) -> int:
    from dfir.tools.view import view  # lazy: it reads IR with xDSL
    ge_aliases.install()  # a script given may be a GE one: `import dataflow`
    count = view(args.source, args.output, args.format, args.graph, args.trace, args.trace_model)
    print(f"wrote {args.output}: {count} graph{'' if count == 1 else 's'}")
    return 0


def _run(args: argparse.Namespace) -> int:
    pairs = parse_pairs(args.input, "--input", "NAME=FILE.npy")
    feeds = {name: _load_npy(name, path) for name, path in pairs}
    om = loader.read_trusted(args.model)
    if om.is_bundle:  # refused before any member's code runs
        raise GeError(f"{args.model} is a bundle of {len(om.bundle)} models; dfir run runs a flow model")
    model = loader.models_of(om)
    try:
        fed = model.feed_data(feeds)
        if fed != 0:
            raise GeError(f"feed_data returned {fed}")
        outputs, _, ret = model.fetch_data(timeout=args.timeout)
    finally:
        model.close()
    if ret != 0:
        raise GeError(f"fetch_data returned {int(ret)}: {getattr(ret, 'message', '') or 'no outputs'}")
    arrays = [output.numpy() for output in outputs]
    if args.output_dir:
        _save_outputs(arrays, args.output_dir)
    else:
        for index, array in enumerate(arrays):
            print(f"output {index}: shape={list(array.shape)} dtype={array.dtype}")
            print(np.array2string(array, separator=", "))
    return 0


def parse_pairs(items: Sequence[str], flag: str, form: str) -> list[tuple[str, str]]:
    """`KEY=VALUE` strings as (key, value) pairs, in order; a GeError names a malformed one."""
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise GeError(f"{flag} {item!r} must have the form {form}")
        pairs.append((key, value))
    return pairs


def parse_options(items: Sequence[str]) -> dict[str, str]:
    """`--option KEY=VALUE` strings as a dict; a key given twice is an error."""
    options: dict[str, str] = {}
    for key, value in parse_pairs(items, "--option", "KEY=VALUE"):
        if key in options:
            raise GeError(f"--option {key} is given twice")
        options[key] = value
    return options


def _load_npy(name: str, path: str) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise GeError(f"input {name!r}: cannot read {path!r} as an .npy array ({error})") from None


def _save_outputs(arrays: Sequence[np.ndarray], directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    for index, array in enumerate(arrays):
        path = os.path.join(directory, f"out_{index}.npy")
        np.save(path, array, allow_pickle=False)
        print(f"output {index}: shape={list(array.shape)} dtype={array.dtype} -> {path}")


if __name__ == "__main__":
    sys.exit(main())
