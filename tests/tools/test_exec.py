"""`dfir exec SCRIPT.py`: a GE DataFlow script runs as written (`dfir.tools.exec_script`), GE's
import names resolving to dfir's modules (`dfir.core.ge_aliases`)."""
from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dfir.data_type
import dfir.dataflow
import dfir.dataflow.utils
import dfir.flow_func
import dfir.ge.error
import dfir.ge.offline_compile
from dfir.core import ge_aliases
from dfir.core.errors import GeError
from dfir.frontend.udf.sources import load_project_class, pack_sources


def dfir_exec(script: Path, *args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dfir.tools.cli", "exec", str(script), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env=env)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _forget_ge_modules() -> None:
    for name in [n for n in sys.modules if n.partition(".")[0] in ge_aliases.TOP_LEVEL]:
        del sys.modules[name]


@pytest.fixture
def no_ge_names(monkeypatch):
    """A test's own sys.meta_path (without GE's finder), environment and GE modules."""
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, ge_aliases.GeAliasFinder)])
    monkeypatch.setenv(ge_aliases.ENV_VAR, "")
    _forget_ge_modules()
    yield
    _forget_ge_modules()


@pytest.fixture
def ge_names(no_ge_names):
    """GE's names resolvable in this test only: the finder first on the test's sys.meta_path."""
    sys.meta_path.insert(0, ge_aliases.GeAliasFinder())


# --- the script runs as `python SCRIPT.py` runs it -------------------------------------------------

def test_the_script_runs_as_main_with_its_argv_path_and_the_callers_cwd(tmp_path):
    script = write(tmp_path / "scripts" / "show.py", """
        import os, sys
        import __main__
        print(__name__, sys.argv, sys.path[0], os.getcwd(), __file__, __main__.__dict__ is globals())
    """)
    run = dfir_exec(script.relative_to(tmp_path), "a", "--flag", "-x", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["__main__", "['scripts/show.py',", "'a',", "'--flag',", "'-x']",
                                  str(tmp_path / "scripts"), str(tmp_path), str(script), "True"]


def test_a_sibling_module_of_the_script_imports(tmp_path):
    write(tmp_path / "app" / "helper.py", "VALUE = 42\n")
    script = write(tmp_path / "app" / "main.py", "import helper\nprint(helper.VALUE)\n")
    run = dfir_exec(script, cwd=tmp_path)
    assert (run.returncode, run.stdout) == (0, "42\n")


@pytest.mark.parametrize("body, status", [("sys.exit(3)", 3), ("sys.exit(0)", 0), ("pass", 0),
                                          ("raise SystemExit(7)", 7)])
def test_the_exit_status_is_the_scripts(tmp_path, body, status):
    script = write(tmp_path / "s.py", f"import sys\n{body}\n")
    assert dfir_exec(script, cwd=tmp_path).returncode == status


def test_an_escaping_exception_prints_pythons_traceback_from_the_script(tmp_path):
    script = write(tmp_path / "fails.py", """
        def inner():
            raise ValueError("boom")
        inner()
    """)
    run = dfir_exec(script, cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr == (
        "Traceback (most recent call last):\n"
        f'  File "{script}", line 4, in <module>\n'
        "    inner()\n"
        f'  File "{script}", line 3, in inner\n'
        '    raise ValueError("boom")\n'
        "ValueError: boom\n")


def test_an_interrupted_script_exits_with_130(tmp_path):
    run = dfir_exec(write(tmp_path / "stop.py", "raise KeyboardInterrupt\n"), cwd=tmp_path)
    assert run.returncode == 130
    assert run.stderr.endswith("KeyboardInterrupt\n")


def test_a_dfir_error_in_the_script_is_a_traceback_too(tmp_path):
    script = write(tmp_path / "fails.py", """
        import dataflow as df
        df.FuncProcessPoint()
    """)
    run = dfir_exec(script, cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr.startswith(f'Traceback (most recent call last):\n  File "{script}", line 3, in <module>\n')
    assert run.stderr.endswith("give compile_config_path or py_func\n")


def test_a_syntax_error_is_shown_as_python_shows_it(tmp_path):
    script = write(tmp_path / "bad.py", "x = (\n")
    run = dfir_exec(script, cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr == f'  File "{script}", line 1\n    x = (\n        ^\nSyntaxError: \'(\' was never closed\n'


def test_a_missing_script_is_an_error(tmp_path):
    run = dfir_exec(Path("nope.py"), cwd=tmp_path)
    assert (run.returncode, run.stderr) == (1, "error: cannot run script 'nope.py': No such file or directory\n")


# --- GE's names ---------------------------------------------------------------------------------

GE_NAMES_SCRIPT = """
    import dataflow
    import dataflow as df
    import dataflow.flow_func as ff
    import dataflow.data_type as dt
    import ge.error
    import ge.offline_compile
    from dataflow.utils import generate_deploy_template
    import dfir.dataflow, dfir.flow_func, dfir.data_type, dfir.ge.offline_compile, dfir.ge.error
    checks = [
        df.FlowGraph is dfir.dataflow.FlowGraph,
        df.flow_func is ff and ff.FlowMsg is dfir.flow_func.FlowMsg,
        df.data_type is dt and dt.DT_INT32 is dfir.data_type.DT_INT32 is df.DT_INT32,
        df.utils.generate_deploy_template is generate_deploy_template,
        ff.FLOW_FUNC_SUCCESS == 0,
        ge.error.GeError is dfir.ge.error.GeError,
        ge.offline_compile.__name__ == "ge.offline_compile",
    ]
    print(checks)
"""


def test_ge_names_resolve_to_dfirs_modules_under_exec(tmp_path):
    run = dfir_exec(write(tmp_path / "names.py", GE_NAMES_SCRIPT), cwd=tmp_path)
    assert (run.returncode, run.stdout) == (0, "[True, True, True, True, True, True, True]\n"), run.stderr


def test_processes_the_script_starts_are_told_to_resolve_ge_names(tmp_path):
    script = write(tmp_path / "child.py", """
        import subprocess, sys
        code = "from dfir.core import ge_aliases; ge_aliases.install_if_requested(); import dataflow; print(dataflow.FlowGraph)"
        print(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout, end="")
    """)
    run = dfir_exec(script, cwd=tmp_path)
    assert (run.returncode, run.stdout) == (0, "<class 'dfir.frontend.dataflow.flow_graph.FlowGraph'>\n"), run.stderr


def test_dfir_compile_resolves_ge_names_in_the_script(tmp_path):
    write(tmp_path / "pipeline.py", """
        import dataflow as df

        @df.pyflow
        def double(x):
            return x * 2

        data = df.FlowData()
        graph = df.FlowGraph([double.fnode()(data)])
    """)
    run = subprocess.run([sys.executable, "-m", "dfir.tools.cli", "compile", "pipeline.py", "-o", "p.om"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "p.om").is_file()


def test_nothing_named_dataflow_or_ge_is_installed():
    code = "import importlib.util as u; print(u.find_spec('dataflow'), u.find_spec('ge'))"
    env = {k: v for k, v in os.environ.items() if k != ge_aliases.ENV_VAR}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert run.stdout == "None None\n"


@pytest.mark.parametrize("name, target", [
    ("dataflow", "dfir.dataflow"), ("dataflow.dataflow", "dfir.dataflow"), ("dataflow.pyflow", "dfir.dataflow"),
    ("dataflow.flow_func", "dfir.flow_func"), ("dataflow.flow_func.func_wrapper", "dfir.flow_func"),
    ("dataflow.data_type", "dfir.data_type"), ("dataflow.utils", "dfir.dataflow.utils"),
    ("ge", "dfir.ge"), ("ge.error", "dfir.ge.error"), ("ge.offline_compile", "dfir.ge.offline_compile"),
    ("dataflow.no_such_module", None), ("ge.no_such_module", None), ("numpy", None), ("dfir", None),
])
def test_target_of(name, target):
    assert ge_aliases.target_of(name) == target


def test_a_utils_submodule_reads_dfirs_module_of_that_name_or_utils():
    own = importlib.util.find_spec("dfir.dataflow.utils.log") if hasattr(dfir.dataflow.utils, "__path__") else None
    assert ge_aliases.target_of("dataflow.utils.log") == ("dfir.dataflow.utils.log" if own else "dfir.dataflow.utils")


def test_ge_submodule_imports_never_write_into_dfirs_modules(ge_names):
    import dfir.dataflow.utils.log  # noqa: F401 - a real submodule is its package's attribute anyway
    before = {m: dict(vars(m)) for m in (dfir.dataflow, dfir.dataflow.utils, dfir.flow_func)}
    import dataflow.flow_func.func_wrapper  # noqa: F401
    import dataflow.utils.utils  # noqa: F401
    from dataflow.utils.deploy_template import generate_deploy_template
    assert generate_deploy_template is dfir.dataflow.utils.generate_deploy_template
    assert {m: dict(vars(m)) for m in before} == before
    assert sys.modules["dataflow.utils"].utils is sys.modules["dataflow.utils.utils"]


def test_a_missing_attribute_names_the_dfir_module(ge_names):
    import dataflow
    with pytest.raises(AttributeError) as error:
        dataflow.no_such_name  # noqa: B018
    assert str(error.value) == "module 'dataflow' has no attribute 'no_such_name' (it is dfir's dfir.dataflow)"


def test_ges_utils_module_reads_the_running_placement_from_dataflow(ge_names):
    from dataflow.utils.utils import DfException, get_running_device_id
    assert get_running_device_id is dfir.dataflow.get_running_device_id
    assert DfException is dfir.dataflow.DfException
    assert "get_running_instance_num" in dir(sys.modules["dataflow.utils.utils"])


def test_a_missing_module_is_not_found(ge_names):
    with pytest.raises(ModuleNotFoundError) as error:
        importlib.import_module("dataflow.no_such_module")
    assert str(error.value) == "No module named 'dataflow.no_such_module'"


def test_star_import_gives_dfirs_public_names(ge_names):
    namespace: dict = {}
    exec("from dataflow import *", namespace)
    assert {k for k in namespace if not k.startswith("__")} == set(dfir.dataflow.__all__)


def test_an_alias_module_pickles_by_name(ge_names):
    import dataflow.flow_func as ff
    assert pickle.loads(pickle.dumps(ff)) is ff
    assert pickle.loads(pickle.dumps(ff.FlowMsg)) is dfir.flow_func.FlowMsg


def test_install_reaches_the_processes_started_after_it(no_ge_names):
    ge_aliases.install_if_requested()
    assert not ge_aliases.installed()
    ge_aliases.install()
    ge_aliases.install()
    assert ge_aliases.installed() and os.environ[ge_aliases.ENV_VAR] == "1"
    assert sum(isinstance(f, ge_aliases.GeAliasFinder) for f in sys.meta_path) == 1


# --- UDF sources written for GE ------------------------------------------------------------------

UDF_SOURCE = """
    import dataflow.flow_func as ff

    class Add:
        msg_type = ff.FlowMsg
"""


def test_udf_sources_saying_import_dataflow_load_when_exec_asked_for_it(tmp_path, monkeypatch, no_ge_names):
    write(tmp_path / "src" / "ge_add.py", UDF_SOURCE)
    monkeypatch.setenv(ge_aliases.ENV_VAR, "1")
    cls, _ = load_project_class(pack_sources(tmp_path / "src"), "ge_add", "Add", "node n")
    assert cls.msg_type is dfir.flow_func.FlowMsg


def test_udf_sources_saying_import_dataflow_fail_clearly_otherwise(tmp_path, no_ge_names):
    write(tmp_path / "src" / "ge_add2.py", UDF_SOURCE)
    with pytest.raises(GeError) as error:
        load_project_class(pack_sources(tmp_path / "src"), "ge_add2", "Add", "node n")
    assert error.value.error_message == ("node n: importing src_python/ge_add2.py raised ModuleNotFoundError: "
                                         "No module named 'dataflow'")
