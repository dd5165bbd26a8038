"""The `xdsl.universe` plugin: plain `xdsl-opt` loads dfir's dialects and passes through it."""
from xdsl.universe import Universe

from dfir.passes import all_passes


def _df():
    from dfir.dialects.df import DF
    return DF


def _ge():
    from dfir.dialects.ge import GE
    return GE


DFIR_UNIVERSE = Universe(all_dialects={"df": _df, "ge": _ge}, all_passes=all_passes())
