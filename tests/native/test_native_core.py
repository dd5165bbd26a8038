"""The native core's C++ unit tests (tests/native/*_test.cc, doctest), built and run by CMake.

The build lives in build/native-tests/ (git-ignored) and is kept between runs, so a rerun
compiles only what changed. A missing doctest header or cmake fails the test with the command
that installs it; a failing C++ case fails it with doctest's report.
"""
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BUILD_DIR = ROOT / "build" / "native-tests"
BINARY = BUILD_DIR / "native_core_tests"
INCLUDE_DIRS = [Path("/usr/include"), Path("/usr/local/include")]
JOBS = "2"


def _run(command: list[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _output(result: subprocess.CompletedProcess) -> str:
    return (result.stdout + result.stderr)[-20000:]


def _configured() -> bool:
    """Whether BUILD_DIR holds a configuration of this checkout's tests/native."""
    cache = BUILD_DIR / "CMakeCache.txt"
    if not cache.is_file():
        return False
    return f"CMAKE_HOME_DIRECTORY:INTERNAL={HERE}" in cache.read_text(errors="replace")


def test_native_core():
    if not any((include / "doctest" / "doctest.h").is_file() for include in INCLUDE_DIRS):
        pytest.fail("doctest's header <doctest/doctest.h> is missing: apt-get install doctest-dev")
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.fail("cmake is missing: pip install -e '.[test]' (or pip install cmake)")
    if not _configured():
        shutil.rmtree(BUILD_DIR, ignore_errors=True)
        configure = _run([cmake, "-S", str(HERE), "-B", str(BUILD_DIR)], timeout=300)
        if configure.returncode != 0:
            pytest.fail(f"configuring the native tests failed:\n{_output(configure)}")
    build = _run([cmake, "--build", str(BUILD_DIR), "-j", JOBS], timeout=1200)
    if build.returncode != 0:
        pytest.fail(f"building the native tests failed:\n{_output(build)}")
    run = _run([str(BINARY), "--no-version"], timeout=600)
    if run.returncode != 0:
        pytest.fail(f"native core tests failed (exit status {run.returncode}):\n{_output(run)}")
