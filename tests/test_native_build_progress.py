"""The native build (setup.py) says each step: how many sources compile, each source as it is
compiled with its time, and the link."""
from __future__ import annotations

import io
import os
import runpy
from pathlib import Path

import pytest
import setuptools

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def setup_module(monkeypatch):
    """setup.py's names, loaded without building anything."""
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: None)
    monkeypatch.chdir(ROOT)
    return runpy.run_path(str(ROOT / "setup.py"), run_name="setup")


def test_each_step_is_a_line_with_the_count_and_the_time(setup_module):
    stream = io.StringIO()
    ticks = iter([10.0, 12.5, 20.0, 20.25])
    steps = setup_module["BuildSteps"](stream, clock=lambda: next(ticks))
    compiled, linked = [], []
    steps.start(2, 33, 2)
    compile_one = steps.compiling(lambda obj, src, *rest: compiled.append((obj, src, rest)))
    compile_one("build/native/a.o", "runtime/native/a.cc", "ext", ["-O2"])
    compile_one("build/native/b.o", "runtime/native/b.cc", "ext", ["-O2"])
    assert steps.linking(lambda objects, output, **kw: linked.append((objects, output, kw)) or "done")(
        ["a.o", "b.o"], "_native.so", libraries=["dl"]) == "done"
    assert compiled == [("build/native/a.o", "runtime/native/a.cc", ("ext", ["-O2"])),
                        ("build/native/b.o", "runtime/native/b.cc", ("ext", ["-O2"]))]
    assert linked == [(["a.o", "b.o"], "_native.so", {"libraries": ["dl"]})]
    assert stream.getvalue().splitlines() == [
        "dfir native build: 2 of 33 sources to compile with 2 jobs (31 up to date in build/native)",
        "dfir native build: [1/2] compiled runtime/native/a.cc in 2.5 s",
        "dfir native build: [2/2] compiled runtime/native/b.cc in 0.2 s",
        "dfir native build: linking 2 objects into _native.so",
    ]


def test_one_job_is_said_in_the_singular(setup_module):
    stream = io.StringIO()
    setup_module["BuildSteps"](stream).start(1, 1, 1)
    assert stream.getvalue() == ("dfir native build: 1 of 1 sources to compile with 1 job "
                                 "(0 up to date in build/native)\n")


def test_stale_sources_are_those_without_an_object_or_older_than_it(setup_module, tmp_path):
    fresh, old, missing = (tmp_path / f"{name}.cc" for name in ("fresh", "old", "missing"))
    for source in (fresh, old, missing):
        source.write_text("")
    for source in (fresh, old):
        (tmp_path / f"{source.stem}.o").write_text("")
    os.utime(tmp_path / "old.o", (old.stat().st_mtime - 100,) * 2)  # its object predates the source
    headers = setup_module["HEADERS"]
    assert headers  # every header is checked: a source may include any
    newest = max(os.stat(path).st_mtime for path in [*headers, fresh])
    os.utime(tmp_path / "fresh.o", (newest + 10,) * 2)
    stale = setup_module["stale_sources"]([str(fresh), str(old), str(missing)],
                                          lambda src: str(Path(src).with_suffix(".o")))
    assert stale == [str(old), str(missing)]


def test_the_job_count_is_the_env_var_else_the_cores(setup_module, monkeypatch):
    monkeypatch.setenv("DFIR_BUILD_JOBS", "3")
    assert setup_module["build_jobs"]() == 3
    monkeypatch.delenv("DFIR_BUILD_JOBS")
    assert setup_module["build_jobs"]() == os.cpu_count()
