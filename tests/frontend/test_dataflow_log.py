"""GE's `dataflow.utils.log` (`dfir.dataflow.utils.log`): the DATAFLOW logger on stdout."""
from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import dfir.dataflow.utils.log as log
log.debug("d %d", 1)
log.info("i %s", "x")
log.warning("w")
log.error("e")
log.log(log.ERROR, "l")
print("level", log.get_log_level())
log.set_log_level(log.DEBUG)
log.debug("after")
"""


def logged(env_level: str | None) -> list[str]:
    """SCRIPT's output under ASCEND_GLOBAL_LOG_LEVEL=`env_level`: a log line as "[LEVEL] <last word>"."""
    env = {"PATH": "/usr/bin:/bin"} if env_level is None else {"PATH": "/usr/bin:/bin", "ASCEND_GLOBAL_LOG_LEVEL": env_level}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return [line.split("] ", 1)[0] + "] " + line.rsplit(" ", 1)[-1] if line.startswith("[") else line
            for line in done.stdout.splitlines()]


@pytest.mark.parametrize("env_level, lines", [
    (None, ["[ERROR] e", "[ERROR] l", "level 40", "[DEBUG] after"]),
    ("9", ["[ERROR] e", "[ERROR] l", "level 40", "[DEBUG] after"]),
    ("1", ["[INFO] x", "[WARNING] w", "[ERROR] e", "[ERROR] l", "level 20", "[DEBUG] after"]),
    ("0", ["[DEBUG] 1", "[INFO] x", "[WARNING] w", "[ERROR] e", "[ERROR] l", "level 10", "[DEBUG] after"]),
])
def test_the_level_comes_from_ascend_global_log_level(env_level, lines):
    assert logged(env_level) == lines


def test_a_line_names_the_logger_and_the_callers_file_and_line():
    done = subprocess.run([sys.executable, "-c", "import dfir.dataflow.utils.log as log\nlog.error('boom %d', 7)"],
                          capture_output=True, text=True, timeout=120)
    line = done.stdout.strip()
    assert line.startswith("[ERROR] DATAFLOW(") and line.endswith(" [<string>:2] boom 7")
