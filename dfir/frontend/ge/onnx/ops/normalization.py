"""Normalizations and softmax."""
from __future__ import annotations

from dfir.frontend.ge.onnx.attributes import attribute, attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter, only_first_output


def _batch_norm(imp, node):
    attrs = attributes_of(node)
    if attrs.get("training_mode", 0):
        raise imp.node_error(node, "training_mode 1 is not supported (inference only)")
    only_first_output(imp, node)
    x, scale, offset, mean, variance = (imp.tensor(node, i) for i in range(5))
    return [imp.g.batch_norm(x, scale, offset, mean, variance, epsilon=attrs.get("epsilon", 1e-5),
                             name=imp.name(node))]


def _layer_norm(imp, node):
    only_first_output(imp, node)
    attrs = attributes_of(node)
    return [imp.g.layer_norm(imp.tensor(node, 0), imp.tensor(node, 1), imp.tensor(node, 2),
                             axis=attrs.get("axis", -1), epsilon=attrs.get("epsilon", 1e-5), name=imp.name(node))]


def _softmax(imp, node):
    return [imp.g.softmax(imp.tensor(node, 0), axis=attribute(node, "axis", -1), name=imp.name(node))]


def _log_softmax(imp, node):
    return [imp.g.log_softmax(imp.tensor(node, 0), axis=attribute(node, "axis", -1), name=imp.name(node))]


def _instance_norm(imp, node):
    x, scale, bias = (imp.tensor(node, i) for i in range(3))
    return [imp.g.instance_norm(x, scale, bias, epsilon=attribute(node, "epsilon", 1e-5), name=imp.name(node))]


def _lrn(imp, node):
    attrs = attributes_of(node)
    return [imp.g.lrn(imp.tensor(node, 0), attrs["size"], alpha=attrs.get("alpha", 1e-4), beta=attrs.get("beta", 0.75),
                      bias=attrs.get("bias", 1.0), name=imp.name(node))]


CONVERTERS: dict[str, Converter] = {
    "BatchNormalization": _batch_norm, "LayerNormalization": _layer_norm, "Softmax": _softmax,
    "LogSoftmax": _log_softmax, "InstanceNormalization": _instance_norm, "LRN": _lrn,
}
