from types import SimpleNamespace

import pytest

from dfir.frontend.dataflow import names
from dfir.om.keys import write_key_pair


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
        from dfir.runtime import worker
        monkeypatch.setattr(worker, "POOL_ABOVE", 0)
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
