"""A node's flow attributes, as GE names them: how the channels into the node queue messages.

`FlowNode.set_attr` takes them (GE sets `_flow_attr` on every FlowNode, so they apply unless a
node sets `_flow_attr` to False):

- `_flow_attr_depth`: how many messages each input channel of the node holds (an int in
  [2, 65536], GE's documented lower bound and dfir's channel depth limit;
  default: the model's channel depth, the option `dfir.runtime.channel_depth`, 128);
- `_flow_attr_enqueue_policy`: `"FIFO"` (default: a producer that finds the channel full waits)
  or `"OVERWRITE"` (it drops the channel's oldest message instead, and the drop is counted).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping

from dfir.core.errors import GeError
from dfir.om.plan import MAX_CHANNEL_DEPTH

FLOW_ATTR = "_flow_attr"
DEPTH = "_flow_attr_depth"
ENQUEUE_POLICY = "_flow_attr_enqueue_policy"
FIFO = "FIFO"
OVERWRITE = "OVERWRITE"
POLICIES = (FIFO, OVERWRITE)
MIN_DEPTH = 2  # GE's documented range for _flow_attr_depth: 2 and up

_log = logging.getLogger("dfir.flow_attrs")


@dataclass(frozen=True)
class QueueAttrs:
    """How a node's input channels queue: `depth` messages (None: the model's depth) and
    whether a full one drops its oldest message (`overwrite`)."""

    depth: int | None = None
    overwrite: bool = False


def check_flow_attr(name: str, value: Any, where: str) -> None:
    """A GeError naming the valid values when `value` cannot be flow attribute `name`; other
    attribute names are not checked here."""
    if name == FLOW_ATTR and not isinstance(value, bool):
        raise GeError(f"{where}: attribute {FLOW_ATTR} must be a bool, got {value!r}")
    if name == DEPTH and (not isinstance(value, int) or isinstance(value, bool)
                          or not MIN_DEPTH <= value <= MAX_CHANNEL_DEPTH):
        raise GeError(f"{where}: attribute {DEPTH} must be an int in [{MIN_DEPTH}, {MAX_CHANNEL_DEPTH}] "
                      f"(the depth of the node's input channels, in messages), got {value!r}")
    if name == ENQUEUE_POLICY and value not in POLICIES:
        raise GeError(f"{where}: attribute {ENQUEUE_POLICY} must be one of {list(POLICIES)}, "
                      f"got {value!r}")


def queue_attrs(attrs: Mapping[str, Any], where: str) -> QueueAttrs:
    """The queueing of a node whose attributes are `attrs` (checked: a GeError for a bad value).
    With `_flow_attr` False the node's channels are the model's defaults, as in GE."""
    for name in (FLOW_ATTR, DEPTH, ENQUEUE_POLICY):
        if name in attrs:
            check_flow_attr(name, attrs[name], where)
    if not attrs.get(FLOW_ATTR, True):
        ignored = [name for name in (DEPTH, ENQUEUE_POLICY) if name in attrs]
        if ignored:
            _log.warning("%s: %s False, so %s take no effect (the channels keep the model's defaults)",
                         where, FLOW_ATTR, " and ".join(ignored))
        return QueueAttrs()
    return QueueAttrs(attrs.get(DEPTH), attrs.get(ENQUEUE_POLICY, FIFO) == OVERWRITE)
