"""The `xdsl.universe` plugin: plain `xdsl-opt` loads dfir's dialects and passes through it."""
from xdsl.universe import Universe

from dfir.dialects.df import DF
from dfir.dialects.ge import GE
from dfir.dialects.iree_util import FLOW, UTIL
from dfir.passes import all_passes

DFIR_UNIVERSE = Universe(all_dialects={"df": lambda: DF, "ge": lambda: GE, "util": lambda: UTIL,
                                       "flow": lambda: FLOW},
                         all_passes=all_passes())
