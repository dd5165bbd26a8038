import pytest

from dfir.frontend.dataflow import names


@pytest.fixture(autouse=True)
def fresh_names():
    """Each test starts with GE's default names (`FlowData`, `FlowData_1`, ...) unused."""
    names.reset()
    yield
