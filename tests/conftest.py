from types import SimpleNamespace

import pytest

from dfir.frontend.dataflow import names
from dfir.om.keys import write_key_pair


@pytest.fixture(autouse=True)
def fresh_names():
    """Each test starts with GE's default names (`FlowData`, `FlowData_1`, ...) unused."""
    names.reset()
    yield


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """Two key pairs, `dev` (the one that signs) and `other`, as files and loaded, in `folder`."""
    folder = tmp_path_factory.mktemp("keys")
    pairs = {}
    for name in ("dev", "other"):
        private, public, key = write_key_pair(str(folder / name))
        pairs[name] = SimpleNamespace(private=private, public=public, key=key, fingerprint=key.fingerprint)
    return SimpleNamespace(**pairs, folder=folder)
