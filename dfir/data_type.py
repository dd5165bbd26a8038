"""The seeds' `dataflow.data_type`: GE's data types (`DT_INT32`, `DT_FLOAT`, ...)."""
from dfir.core.data_type import *  # noqa: F401,F403
from dfir.core.data_type import __all__  # noqa: F401
