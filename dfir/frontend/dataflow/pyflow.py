"""`@pyflow` and `@method`: turn a Python function or class into a UDF that `.fnode()` places in a graph.

A function becomes one entry point whose inputs are its parameters. A class becomes one node whose
inputs and outputs concatenate those of its `@method`s (in `dir()` order, as GE does); each
method is exposed on the node as `node.<method>(...)`. Outputs come from `num_returns` or the
return annotation (`-> Tuple[A, B]` gives 2). `env_hook_func` (a function without arguments) runs
once in the UDF's process before the UDF is built; `visible_device_enable=True` shows a UDF on a
device that device alone (its running device id is then 0), as in GE
(`dfir.frontend.flow_func.running`).
"""
from __future__ import annotations

import functools
import inspect
import typing

from dfir.core.errors import GeError
from dfir.core.udf_payload import UdfPayload
from dfir.frontend.dataflow.graph import FlowNode
from dfir.frontend.dataflow.process_points import FuncProcessPoint
from dfir.frontend.dataflow.udf_spec import FuncSpec, UdfSpec
from dfir.frontend.flow_func import running
from dfir.frontend.options import warn_no_effect

PYFLOW_OPTIONS = ("num_returns", "resources", "env_hook_func", "visible_device_enable",
                  "stream_input", "choice_output")
METHOD_OPTIONS = ("num_returns", "choice_output", "stream_input")


def _param_count(fn, skip_self: bool) -> int:
    params = list(inspect.signature(fn).parameters.values())[1 if skip_self else 0:]
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _annotated_returns(fn) -> int | None:
    try:
        hint = typing.get_type_hints(fn).get("return")
    except Exception:  # unresolvable annotations say nothing about the count
        return None
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        if args and args[-1] is not Ellipsis:
            return len(args)
    return None


def _num_returns(fn, options: dict, where: str) -> int:
    annotated = _annotated_returns(fn)
    if "num_returns" not in options:
        return annotated or 1
    count = options["num_returns"]
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        raise GeError(f"{where}: num_returns must be an int greater than 0, got {count!r}")
    if annotated is not None and annotated != count:
        raise GeError(f"{where}: the return annotation gives {annotated} outputs but "
                      f"num_returns is {count}")
    return count


def _check_options(options: dict, allowed: tuple[str, ...], where: str) -> None:
    for key in options:
        if key not in allowed:
            raise GeError(f"{where}: option '{key}' is not supported; supported: {list(allowed)}")
    if options.get("stream_input", "Queue") != "Queue":
        raise GeError(f"{where}: stream_input must be 'Queue', got {options['stream_input']!r}")
    choice = options.get("choice_output")
    if choice is not None and not callable(choice):
        raise GeError(f"{where}: choice_output must be callable, got {choice!r}")
    hook = options.get("env_hook_func")
    if hook is not None and not _takes_no_arguments(hook):
        raise GeError(f"{where}: env_hook_func must be a function taking no arguments, got {hook!r}")
    visible = options.get("visible_device_enable", False)
    if not isinstance(visible, bool):
        raise GeError(f"{where}: visible_device_enable must be True or False, got {visible!r}")
    if "resources" in options:
        warn_no_effect("@pyflow(resources=...)")  # kept in the IR (df.node `resources`), not scheduled on


def _takes_no_arguments(fn) -> bool:
    if not callable(fn):
        return False
    try:
        inspect.signature(fn).bind()
    except TypeError:
        return False
    except ValueError:  # no signature to read (a builtin): let the call decide
        return True
    return True


def _mark_placement_options(target, options: dict) -> None:
    """Ship `env_hook_func` and `visible_device_enable` with the UDF's code (its function or class),
    where the worker building it finds them (`dfir.frontend.flow_func.running.build_placed`)."""
    if options.get("env_hook_func") is not None:
        setattr(target, running.ENV_HOOK, options["env_hook_func"])
    if options.get("visible_device_enable"):
        setattr(target, running.VISIBLE_DEVICE, True)


class PyFunctionProcessPoint:
    """What `@pyflow` makes of a function: call `.fnode()` to get a FlowNode running it."""

    def __init__(self, function, options: dict):
        where = f"@pyflow {function.__qualname__}"
        _check_options(options, PYFLOW_OPTIONS, where)
        self._function = function
        self._options = options
        self.func_name = function.__name__
        self.input_num = _param_count(function, skip_self=False)
        self.output_num = _num_returns(function, options, where)
        _mark_placement_options(function, options)
        functools.update_wrapper(self, function)

    def __call__(self, *args, **kwargs):
        raise GeError(f"{self.func_name} is a @pyflow UDF: build a node with {self.func_name}.fnode()")

    @functools.cached_property
    def _spec(self) -> UdfSpec:
        name = self.func_name
        payload = UdfPayload("function", self._function, num_returns={name: self.output_num},
                             choice_output=_choice(name, self._options))
        func = FuncSpec(name, list(range(self.input_num)), list(range(self.output_num)),
                        "stream_input" in self._options)
        return UdfSpec(payload, [func], self._options.get("resources"))

    def udf_spec(self) -> UdfSpec:
        """The same spec for every node of this function, so its payload is serialized once."""
        return self._spec

    def fnode(self, *args, name: str | None = None, **kwargs) -> FlowNode:
        """A node running this function, named `name` (default `<function>_fnode`)."""
        if args or kwargs:
            given = [repr(a) for a in args] + sorted(kwargs)
            raise GeError(f"{self.func_name}.fnode() takes only name=, got {', '.join(given)}")
        node = FlowNode(self.input_num, self.output_num, name=name or f"{self.func_name}_fnode")
        node.add_process_point(FuncProcessPoint(name=self.func_name, py_func=self))
        return node


def _choice(name: str, options: dict) -> dict:
    choice = options.get("choice_output")
    return {name: choice} if choice is not None else {}


class _BoundMethod:
    """`node.<method>(...)`: connects that method's inputs and returns its outputs."""

    def __init__(self, node: FlowNode, func: FuncSpec):
        self._node = node
        self._func = func

    def __call__(self, *inputs):
        if len(inputs) != len(self._func.inputs):
            raise GeError(f"node {self._node.name} ({self._node.loc}): method {self._func.name} takes "
                          f"{len(self._func.inputs)} inputs, got {len(inputs)}")
        return self._node._connect(inputs, self._func.inputs, self._func.outputs)


def _class_fnode(cls, options: dict, args: tuple, kwargs: dict) -> FlowNode:
    funcs: list[FuncSpec] = []
    num_returns: dict[str, int] = {}
    choices: dict = {}
    n_in = n_out = 0
    for name in dir(cls):
        method_def = getattr(cls, name)
        if name.startswith("__") or not getattr(method_def, "__df_method__", False):
            continue
        method_options = {**options, **method_def.__df_options__}
        where = f"@method {cls.__name__}.{name}"
        inputs = _param_count(method_def, skip_self=True)
        outputs = _num_returns(method_def, method_options, where)
        funcs.append(FuncSpec(name, list(range(n_in, n_in + inputs)),
                              list(range(n_out, n_out + outputs)), "stream_input" in method_options))
        num_returns[name] = outputs
        choices.update(_choice(name, method_options))
        n_in, n_out = n_in + inputs, n_out + outputs
    if not funcs:
        raise GeError(f"@pyflow class {cls.__name__} has no @method")
    spec = UdfSpec(UdfPayload("class", cls, tuple(args), dict(kwargs), num_returns, choices), funcs,
                   options.get("resources"))
    node = FlowNode(n_in, n_out, name=f"{cls.__name__}_fnode")
    node.add_process_point(FuncProcessPoint(name=cls.__name__, py_func=spec))
    for func in funcs:
        setattr(node, func.name, _BoundMethod(node, func))
    return node


def _make_class(cls, options: dict):
    where = f"@pyflow {cls.__qualname__}"
    _check_options(options, PYFLOW_OPTIONS, where)
    for reserved in ("fnode",):
        if hasattr(cls, reserved):
            raise GeError(f"{where}: the class may not define '{reserved}'")
    _mark_placement_options(cls, options)

    class FlowClass:
        __doc__ = cls.__doc__
        _df_class = cls

        def __init__(self, *args, **kwargs):
            raise GeError(f"{cls.__name__} is a @pyflow UDF class: build a node with "
                          f"{cls.__name__}.fnode(...)")

        @staticmethod
        def fnode(*args, **kwargs) -> FlowNode:
            return _class_fnode(cls, options, args, kwargs)

    FlowClass.__name__ = cls.__name__
    FlowClass.__qualname__ = cls.__qualname__
    FlowClass.__module__ = cls.__module__
    return FlowClass


def _make(target, options: dict):
    if inspect.isfunction(target):
        return PyFunctionProcessPoint(target, options)
    if inspect.isclass(target):
        return _make_class(target, options)
    raise GeError(f"@pyflow applies to a function or a class, got {type(target).__name__}")


def pyflow(*args, **kwargs):
    """`@pyflow`, `@pyflow()` or `@pyflow(num_returns=2, stream_input='Queue', ...)`."""
    if len(args) == 1 and not kwargs and callable(args[0]):
        return _make(args[0], {})
    if args:
        raise GeError("@pyflow takes keyword options only, e.g. @pyflow(num_returns=2)")
    return functools.partial(_make, options=kwargs)


def method(*args, **kwargs):
    """`@method()` marks a class method as an entry point of a `@pyflow` class."""
    if args:
        raise GeError("@method takes keyword options only, e.g. @method(num_returns=2)")
    _check_options(kwargs, METHOD_OPTIONS, "@method")

    def mark(fn):
        fn.__df_method__ = True
        fn.__df_options__ = dict(kwargs)
        return fn
    return mark
