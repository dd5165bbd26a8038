"""`dfir trace SCRIPT.py [ARGS ...] -o run.json [--rate R]`: run a script with every model it
loads traced, and write the traces as one file Perfetto and chrome://tracing open (docs/tracing.md).

The script runs as `dfir exec` runs it (as `__main__`, in this process, `sys.argv` = [SCRIPT.py,
ARGS...]), with env DFIR_TRACE=on, or =R with `--rate R` (trace that share of the transactions,
0 < R <= 1), so the models it loads and the workers they start record. The file is written when the
script ends, also when it raised (its traceback printed, exit status 1) or called sys.exit.

dfir's own options go either before SCRIPT.py, or after the script's arguments (`dfir trace s.py
a b -o run.json`); given before SCRIPT.py, every argument after it is the script's, its own `-o`
included.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from contextlib import contextmanager
from typing import Iterator, Sequence

from dfir.core.errors import GeError
from dfir.runtime.driver import tracing
from dfir.runtime.driver.trace_file import write_trace
from dfir.runtime.driver.trace_model import ModelTrace
from dfir.tools.exec_script import exec_script

__all__ = ["add_trace_command", "parse_rate", "summary"]

USAGE = "dfir trace SCRIPT.py [ARGS ...] -o FILE [--rate R]"
DESCRIPTION = ("Run SCRIPT.py as `dfir exec` does, with every model it loads traced, and write one trace file "
               "(open it in the Perfetto UI or chrome://tracing). dfir's options go after the script's "
               "arguments or before SCRIPT.py; given before it, every argument after SCRIPT.py is the script's.")
_WITH_VALUE = ("-o", "--output", "--rate")


def add_trace_command(commands) -> None:
    """Add `trace` to the `dfir` command's subparsers."""
    trace_cmd = commands.add_parser("trace", usage=USAGE, description=DESCRIPTION,
                                    help="run a script with its models traced; write one Perfetto/Chrome trace file")
    _add_own_options(trace_cmd)
    trace_cmd.add_argument("script", help="the Python script, run as __main__ (as `dfir exec` runs it)")
    trace_cmd.add_argument("args", nargs=argparse.REMAINDER,
                           help="its arguments (sys.argv[1:]); dfir's options may follow them")
    trace_cmd.set_defaults(command=lambda args: _trace(trace_cmd, args))


def parse_rate(text: str) -> str:
    """`--rate`'s value as DFIR_TRACE takes it ("0.25"; 1 is "on"); an error unless it is a
    number in (0, 1]."""
    try:
        rate = float(text)
    except ValueError:
        rate = float("nan")
    if not 0 < rate <= 1:  # a NaN fails too
        raise argparse.ArgumentTypeError(f"must be a number above 0 and at most 1 (the share of the "
                                         f"transactions traced, e.g. 0.1), not {text!r}")
    return "on" if rate == 1 else repr(rate)


def _add_own_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", metavar="FILE", help="the trace file to write (run.json)")
    parser.add_argument("--rate", type=parse_rate, metavar="R",
                        help="trace this share of the transactions, 0 < R <= 1 (default: all)")


def _trace(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.output is None and args.rate is None:
        args.args, trailing = _split_trailing_options(args.args)
        _trailing_parser().parse_args(trailing, namespace=args)
    if args.output is None:
        parser.error("the following arguments are required: -o/--output")
    status = _run_traced(args.script, args.args, "on" if args.rate is None else args.rate)
    _write(args.output)
    return status


def _split_trailing_options(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """`argv` as (the script's arguments, dfir's options after them): the longest tail made only
    of `-o FILE`, `--output FILE`, `--rate R`, `--output=FILE` and `--rate=R`."""
    for start in range(len(argv) + 1):
        if _only_own_options(argv[start:]):
            return list(argv[:start]), list(argv[start:])
    raise AssertionError("an empty tail is made only of options")


def _only_own_options(tail: Sequence[str]) -> bool:
    index = 0
    while index < len(tail):
        word = tail[index]
        if word in _WITH_VALUE:
            index += 2
        elif word.startswith(("--output=", "--rate=")):
            index += 1
        else:
            return False
    return index == len(tail)


def _trailing_parser() -> argparse.ArgumentParser:
    """Parses dfir's options found after the script's arguments, with the command's messages."""
    parser = argparse.ArgumentParser(prog="dfir trace", usage=USAGE, add_help=False)
    _add_own_options(parser)
    return parser


def _run_traced(script: str, script_args: Sequence[str], setting: str) -> int:
    """Run the script with DFIR_TRACE=`setting`; its exit status, also when it calls sys.exit."""
    with _environment(tracing.TRACE_ENV, setting):
        try:
            return exec_script(script, script_args)
        except SystemExit as exit_:
            return _exit_status(exit_.code)


def _exit_status(code: object) -> int:
    """The status `sys.exit(code)` gives, as Python gives it (a message: printed, status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


@contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    saved = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


def _write(path: str) -> None:
    """Write the traces of the models this process loaded to `path` and say what it holds."""
    traces = tracing.traces()
    try:
        write_trace(path, traces)
    except OSError as error:
        raise GeError(f"cannot write the trace to {path!r}: {error.strerror or error}") from None
    print(summary(traces, path))


def summary(traces: Sequence[ModelTrace], path: str) -> str:
    """What `dfir trace` says it wrote: slices, flows (one per transaction seen in two slices or
    more) and models."""
    if not traces:
        return f"no model was traced; wrote {path} with no slices"
    slices = sum(len(trace.slices) for trace in traces)
    flows = sum(_flow_count(trace) for trace in traces)
    return (f"wrote {_count(slices, 'slice')} and {_count(flows, 'flow')} of "
            f"{_count(len(traces), 'model')} to {path}")


def _flow_count(trace: ModelTrace) -> int:
    """The transactions of `trace` seen in two slices or more: each is one chain of arrows."""
    seen = Counter(piece.transaction for piece in trace.slices if piece.transaction)
    return sum(count >= 2 for count in seen.values())


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
