"""The ONNX test suites through dfir: every test case the installed `onnx` package generates
(`onnx.backend.test.case`: one model per op form, with inputs and expected outputs) and every
model test it ships (`simple`, `pytorch-converted`, `pytorch-operator`: models of opsets 1 to 12
with test data sets; `light`: nine classic CNNs, named `<suite>/<test>`) runs the way users run a
model: Graph.from_onnx -> dfir.compile -> dfir.load -> feed_data /
fetch_data, on the reference backend unless told otherwise. Outputs are compared as onnx's own
backend tests compare them (same shapes and dtypes, `assert_allclose` with the case's rtol/atol).

Each case ends as one of
  matched   dfir ran it and agreed with the expected outputs;
  refused   a GeError at import or compile: dfir said it cannot run the model, and why;
  wrong     dfir ran it and disagreed (must be 0: what dfir cannot run exactly it refuses);
  crashed   anything else: an exception that is not a GeError, or a failed run.
The report gives the counts (in all and per suite), the refusals by reason (the ops dfir lacks, by cases), and every
wrong or crashed case by name. `imported` counts the cases that got through Graph.from_onnx.

--write-baseline writes the names of the matched cases to tests/data/onnx_suite_matched.txt,
which tests/frontend/test_onnx_suite.py keeps from shrinking.

Run: python benchmarks/onnx_suite.py [--backend reference|auto|iree-cpu] [--sample N] [--cases REGEX]
                                     [--suites node,simple,pytorch-converted,pytorch-operator,light]
                                     [--top 25] [--write-baseline] [--smoke]
"""
from __future__ import annotations

import argparse
import collections
import logging
import re
import sys
import time
import warnings
from pathlib import Path
from typing import Iterable, NamedTuple

import numpy as np
import onnx
from onnx import numpy_helper

import dfir
from dfir.ge.error import GeError
from dfir.ge.graph import Graph

BASELINE = Path(__file__).resolve().parent.parent / "tests" / "data" / "onnx_suite_matched.txt"
STATUSES = ("matched", "refused", "wrong", "crashed")


class Outcome(NamedTuple):
    name: str
    status: str
    reason: str = ""
    imported: bool = False


SUITES = ("node", "simple", "pytorch-converted", "pytorch-operator", "light")
"""The suites the onnx package ships: its node test cases, and its model test data (models of
opset 1 and later saved with inputs and expected outputs; `light`: classic CNNs with their
weights as ConstantOfShape fills, run on the input onnx's runner generates)."""


class ModelCase(NamedTuple):
    """A model test of the onnx package, as `onnx.backend.test.case` gives a node test case."""
    name: str
    model: onnx.ModelProto
    data_sets: list
    rtol: float
    atol: float


def collect_cases(pattern: str | None = None, suites: Iterable[str] = SUITES) -> list:
    """The test cases of `suites` in the installed onnx package (their expected outputs computed by
    onnx), those named by `pattern` only; a model case is named `<suite>/<test>`."""
    cases = []
    for suite in suites:
        if suite == "node":
            from onnx.backend.test.case import node
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the generators overflow casts on purpose
                cases += node.collect_testcases(None)
        else:
            cases += _model_cases(suite, pattern)
    return [c for c in cases if pattern is None or re.search(pattern, c.name)]


def _model_cases(suite: str, pattern: str | None) -> list[ModelCase]:
    """The model tests of `suite`, loaded only where `pattern` names them."""
    from onnx.backend.test import loader
    tests = loader.load_model_tests(kind="real" if suite == "light" else suite)
    if suite == "light":  # the `real` models shipped as files (others are downloads)
        tests = [t for t in tests if (t.url or "").startswith("onnx/backend/test/data/light/")]
    cases = []
    for test in tests:
        name = f"{suite}/{test.name}"
        if pattern is not None and not re.search(pattern, name):
            continue
        if suite == "light":
            path = Path(onnx.__file__).parent.parent / test.url
            model = onnx.load(path)
            expected = onnx.load_tensor(str(path.with_name(f"{path.stem}_output_0.pb")))
            data_sets = [([_dummy_input(vi) for vi in _fed(model)], [expected])]
        else:
            model = onnx.load(Path(test.model_dir) / "model.onnx")
            data_sets = [(_read_protos(folder, "input", model.graph.input), _read_protos(folder, "output", model.graph.output))
                         for folder in sorted(Path(test.model_dir).glob("test_data_set*"))]
        cases.append(ModelCase(name, model, data_sets, test.rtol, test.atol))
    return cases


def _fed(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    weights = {t.name for t in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in weights]


def _dummy_input(info: onnx.ValueInfoProto) -> np.ndarray:
    """The input onnx's backend runner feeds a light model: 0, 1/n, ..., (n-1)/n in its shape."""
    shape = [d.dim_value if d.HasField("dim_value") else 1 for d in info.type.tensor_type.shape.dim]
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) / n).astype(np.float32)


def _read_protos(folder: Path, kind: str, infos) -> list:
    """The `<kind>_<i>.pb` files of a test data set: tensors, or sequences of tensors (as lists)."""
    values = []
    for i, info in enumerate(infos):
        path = folder / f"{kind}_{i}.pb"
        if not path.exists():
            break
        proto = onnx.SequenceProto() if info.type.HasField("sequence_type") else onnx.TensorProto()
        proto.ParseFromString(path.read_bytes())
        values.append(numpy_helper.to_list(proto) if isinstance(proto, onnx.SequenceProto) else numpy_helper.to_array(proto))
    return values


def run_case(case, backend: str = "reference") -> Outcome:
    """One test case through dfir's public API. Where the import refuses because an input the
    model takes as data determines a shape (axes, k, a shape given as a model input), the case is
    run again with that input fixed at import to each data set's value (`constant_inputs`), as
    users of such a model do; those cases are reported as matched `with constant inputs`."""
    constants: list[str] = []
    first = None
    while True:
        outcome = _run_with_constants(case, constants, backend)
        first = first or outcome
        wanted = _MODEL_INPUTS_NEEDED.search(outcome.reason) if outcome.status == "refused" else None
        names = [n for n in re.findall(r"'([^']+)'", wanted.group(1)) if n not in constants] if wanted else []
        if not names or len(constants) >= 8:
            return first if outcome.status == "refused" else outcome  # the refusal of the model as shipped
        constants += names


def _run_with_constants(case, constants: list[str], backend: str) -> Outcome:
    """The case with the inputs named in `constants` fixed at import (one import per data set)."""
    names = [vi.name for vi in case.model.graph.input if vi.name not in {t.name for t in case.model.graph.initializer}]
    if not constants:
        return _run_model(case, case.model, case.data_sets, backend)
    outcome = Outcome(case.name, "matched")
    for inputs, expected in case.data_sets:
        values = dict(zip(names, _arrays(inputs)))
        try:
            graph = Graph.from_onnx(case.model, constant_inputs={n: values[n] for n in constants})
        except GeError as error:
            return Outcome(case.name, "refused", f"import: {error}")
        except Exception as error:  # noqa: BLE001 - a crash is what this reports
            return Outcome(case.name, "crashed", f"import: {type(error).__name__}: {error}")
        fed = [values[n] for n in names if n not in constants]
        outcome = _run_model(case, graph, [(fed, expected)], backend)
        if outcome.status != "matched":
            return outcome
    return outcome._replace(reason=f"with constant inputs {', '.join(constants)}")


def _run_model(case, model, data_sets, backend: str) -> Outcome:
    """Import `model` (unless it is a Graph already), compile, load, and run every data set."""
    try:
        graph = model if isinstance(model, Graph) else Graph.from_onnx(model)
    except GeError as error:
        return Outcome(case.name, "refused", f"import: {error}")
    except Exception as error:  # noqa: BLE001 - a crash is what this reports
        return Outcome(case.name, "crashed", f"import: {type(error).__name__}: {error}")
    try:
        compiled = dfir.compile(graph, {"dfir.ge.backend": backend})
    except GeError as error:
        return Outcome(case.name, "refused", f"compile: {error}", True)
    except Exception as error:  # noqa: BLE001
        return Outcome(case.name, "crashed", f"compile: {type(error).__name__}: {error}", True)
    try:
        with dfir.load(compiled.om) as loaded:
            for inputs, expected in data_sets:
                status, reason = _run_once(loaded, inputs, expected, case.rtol, case.atol)
                if status != "matched":
                    return Outcome(case.name, status, reason, True)
    except Exception as error:  # noqa: BLE001
        return Outcome(case.name, "crashed", f"run: {type(error).__name__}: {error}", True)
    return Outcome(case.name, "matched", imported=True)


def _run_once(model, inputs, expected, rtol: float, atol: float) -> tuple[str, str]:
    inputs, expected = _arrays(inputs), _arrays(expected)
    model.feed_data(inputs)
    outputs, _, ret = model.fetch_data(timeout=60000)
    if ret != 0:
        return "crashed", f"run: {ret}"
    if len(outputs) != len(expected):
        return "wrong", f"{len(outputs)} outputs, expected {len(expected)}"
    for i, (tensor, want) in enumerate(zip(outputs, expected)):
        got = tensor.numpy()
        if got.shape != want.shape or got.dtype != want.dtype:
            return "wrong", f"output {i} is {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}"
        try:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
        except AssertionError as error:
            return "wrong", f"output {i}: {str(error).strip().splitlines()[2] if 'Mismatch' in str(error) else error}"
    return "matched", ""


def _arrays(values) -> list:
    """Data-set values as arrays (a case gives some, such as float16 ones, as TensorProtos)."""
    return [numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else v for v in values]


def run_suite(cases: Iterable, backend: str = "reference") -> list[Outcome]:
    logging.getLogger("dfir.onnx").setLevel(logging.ERROR)  # opset conversion notes, one per case
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return [run_case(case, backend) for case in cases]


_MODEL_INPUTS_NEEDED = re.compile(r"the model inputs? ('[^:]+'): give (?:their values|its value) with")
_UNSUPPORTED = re.compile(r"has ops dfir does not support: (.*)$")
_LISTED_OP = re.compile(r"(?:^|\), )([\w.]+) \(nodes? ")
_CONTEXT = re.compile(r"^(?:[a-z]+=[^;]*; )+")


def refusal_reasons(outcome: Outcome) -> list[str]:
    """What a refusal is counted under: each unsupported op, else the error's first words."""
    listed = _UNSUPPORTED.search(outcome.reason)
    if listed:
        return [f"unsupported op {op}" for op in _LISTED_OP.findall(listed.group(1))]
    stage, _, message = outcome.reason.partition(": ")
    message = _CONTEXT.sub("", message)  # the model and node, named by every message
    return [f"{stage}: {re.sub(r'(?<![A-Za-z])[0-9]+', 'N', message)[:90]}"]


def suite_of(name: str) -> str:
    """The suite a case belongs to: `node` for the node test cases, else its name's prefix."""
    return name.split("/", 1)[0] if "/" in name else "node"


def report(outcomes: list[Outcome], seconds: float, backend: str, top: int) -> str:
    counts = collections.Counter(o.status for o in outcomes)
    total = len(outcomes)
    lines = [f"onnx {onnx.__version__} test cases through dfir ({backend} backend), {seconds:.1f} s",
             f"  cases     {total}",
             f"  imported  {sum(o.imported for o in outcomes):5d}"]
    lines += [f"  {status:<9} {counts[status]:5d}  ({100 * counts[status] / max(total, 1):.1f}%)" for status in STATUSES]
    by_suite = collections.defaultdict(collections.Counter)
    for o in outcomes:
        by_suite[suite_of(o.name)][o.status] += 1
    for suite, tally in by_suite.items():
        n = sum(tally.values())
        lines.append(f"  {suite + ':':<19} {tally['matched']:4d} of {n:4d} matched ({100 * tally['matched'] / n:.1f}%), "
                     + ", ".join(f"{tally[status]} {status}" for status in STATUSES[1:]))
    constant = sum(o.status == "matched" and bool(o.reason) for o in outcomes)
    lines.append(f"  matched with inputs fixed at import (constant_inputs): {constant}; "
                 f"without: {counts['matched'] - constant} ({100 * (counts['matched'] - constant) / max(total, 1):.1f}%)")
    reasons = collections.Counter(r for o in outcomes if o.status == "refused" for r in refusal_reasons(o))
    unsupported = sorted({r for r in reasons if r.startswith("unsupported op ")})
    lines.append(f"refused by reason (cases; {len(unsupported)} unsupported ops in all), top {top}:")
    lines += [f"  {n:5d}  {reason}" for reason, n in reasons.most_common(top)]
    for status in ("wrong", "crashed"):
        lines += [f"{status}: {o.name}: {o.reason[:300]}" for o in outcomes if o.status == status]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="reference", choices=("reference", "auto", "iree-cpu", "iree-cuda"))
    parser.add_argument("--sample", type=int, default=0, help="run every k-th case only (0: all)")
    parser.add_argument("--cases", help="only the cases whose name matches this regex")
    parser.add_argument("--suites", default=",".join(SUITES), help=f"comma-separated, of {', '.join(SUITES)}")
    parser.add_argument("--top", type=int, default=25, help="how many refusal reasons to list")
    parser.add_argument("--write-baseline", action="store_true", help=f"write the matched names to {BASELINE}")
    parser.add_argument("--smoke", action="store_true", help="a few cases only")
    args = parser.parse_args(argv)
    suites = args.suites.split(",")
    unknown = [s for s in suites if s not in SUITES]
    if unknown:
        parser.error(f"unknown suite {unknown[0]!r}; the suites: {', '.join(SUITES)}")
    cases = collect_cases(args.cases, suites)
    if args.smoke:
        cases = [c for c in cases if c.name.startswith(("test_add", "test_relu", "test_abs", "test_equal"))]
    elif args.sample:
        cases = cases[::args.sample]
    start = time.perf_counter()
    outcomes = run_suite(cases, args.backend)
    print(report(outcomes, time.perf_counter() - start, args.backend, args.top))
    if args.write_baseline:
        if args.cases or args.sample or args.smoke or args.backend != "reference" or set(suites) != set(SUITES):
            parser.error("--write-baseline needs the whole suite on the reference backend")
        BASELINE.write_text("".join(f"{o.name}\n" for o in outcomes if o.status == "matched"))
        print(f"wrote {BASELINE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
