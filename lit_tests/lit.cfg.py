"""lit configuration for dfir's IR tests: `lit -v lit_tests`.

Tests are `.mlir` (dfir-opt + filecheck) and `.test` (other tools) files. `dfir-opt`, `dfir` and
`filecheck` are the installed console scripts, found on PATH; lit writes scratch files to
`Output/` folders beside the tests (ignored by git).
"""
import os

import lit.formats

config.name = "dfir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.test_source_root

# Console scripts may live in a virtual environment or behind pyenv shims; keep what they need.
for name in ("VIRTUAL_ENV", "PYENV_ROOT", "PYENV_VERSION", "PYTHONPATH"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
# dfir signs what it compiles with the key of its home: the tests' own, never the user's ~/.config/dfir
config.environment["DFIR_HOME"] = os.path.join(config.test_exec_root, "Output", "dfir-home")
