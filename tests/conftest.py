import os
import tempfile
from types import SimpleNamespace

import pytest

from dfir.frontend.dataflow import names
from dfir.om.keys import write_key_pair


# `auto` remembers its choices per machine: the suite's own store, not the user's
os.environ["DFIR_AUTO_STORE"] = tempfile.mkdtemp(prefix="dfir-auto-")
# The suite's own dfir home (its signing key, made on first use, and trusted keys), never the
# user's ~/.config/dfir; and no key or trust setting of the user's shell
os.environ["DFIR_HOME"] = tempfile.mkdtemp(prefix="dfir-home-")
for _name in ("DFIR_SIGNING_KEY", "DFIR_TRUSTED_KEYS", "DFIR_TRUST"):
    os.environ.pop(_name, None)


@pytest.fixture(autouse=True)
def fresh_names():
    """Each test starts with GE's default names (`FlowData`, `FlowData_1`, ...) unused."""
    names.reset()
    yield


@pytest.fixture(params=["threads", "pool"])
def lean_executor(request, monkeypatch):
    """How workers run lean loops: a thread each, or all of a device's on one `FiringPool`
    (POOL_ABOVE 0; the forked workers inherit it)."""
    if request.param == "pool":
        from dfir.runtime.worker import executor as worker
        monkeypatch.setattr(worker, "POOL_ABOVE", 0)
    return request.param


@pytest.fixture(params=["lean", "sets"])
def plain_firing(request, monkeypatch):
    """How workers fire plain single-output Python funcs: in lean loops, or as the general path's
    funcs whose outputs go to fixed channels, their sets taken and output sets put natively
    (`OutputsStep`). The forked workers inherit the choice."""
    if request.param == "sets":
        from dfir.runtime.worker import executor as worker
        loop_kind = worker.DeviceExecutor._loop_kind

        def without_lean_loops(self, unit, func):
            kind = loop_kind(self, unit, func)
            if kind != "lean":
                return kind
            return "sets" if self._fixed_outputs(unit, func) is not None else "firing"
        monkeypatch.setattr(worker.DeviceExecutor, "_loop_kind", without_lean_loops)
    return request.param


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """Two key pairs, `dev` (the one that signs) and `other`, as files and loaded, in `folder`."""
    folder = tmp_path_factory.mktemp("keys")
    pairs = {}
    for name in ("dev", "other"):
        private, public, key = write_key_pair(str(folder / name))
        pairs[name] = SimpleNamespace(private=private, public=public, key=key, fingerprint=key.fingerprint)
    return SimpleNamespace(**pairs, folder=folder)
