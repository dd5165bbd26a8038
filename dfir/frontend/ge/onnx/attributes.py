"""A node's attributes as Python values, and how messages name a node."""
from __future__ import annotations

import onnx
from onnx import helper


def attributes_of(node: onnx.NodeProto) -> dict[str, object]:
    """The node's attributes as Python values (strings decoded)."""
    values = {}
    for attribute in node.attribute:
        value = helper.get_attribute_value(attribute)
        if isinstance(value, bytes):
            value = value.decode()
        values[attribute.name] = value
    return values


def attribute(node: onnx.NodeProto, name: str, default=None):
    return attributes_of(node).get(name, default)


def node_label(node: onnx.NodeProto, index: int) -> str:
    """How a message names node number `index`: its name quoted, else `#index`."""
    return f"'{node.name}'" if node.name else f"#{index}"
