"""The `dfir.flow_func` API on its own: params and getters, messages, the run context, balance,
wrappers, logging and status codes (UDF projects end to end: tests/frontend/test_udf_project.py)."""
import logging
import os

import numpy as np
import pytest

from dfir.core.messages import Kind, Message, TransactionMeta
from dfir.core.udf_params import InitParam, from_plan, typed_param
import dfir.data_type as dt
import dfir.flow_func as ff
from dfir.frontend.flow_func.meta_params import NodeFacts
from dfir.frontend.flow_func.run_context import ExceptionBoard, RunState
from dfir.frontend.flow_func.scope import CallScope, call_scope
from dfir.frontend.flow_func.status import status_name
from dfir.ge.error import GeError

WHERE = "FuncProcessPoint pp"

# (value set_init_param gets, its tag, the getter that returns it)
TYPED_VALUES = [
    (3, "int", "get_attr_int"),
    (0.5, "float", "get_attr_float"),
    (True, "bool", "get_attr_bool"),
    ("add", "str", "get_attr_str"),
    (dt.DT_INT32, "dtype", "get_attr_tensor_dtype"),
    ([1, 2], "list_int", "get_attr_int_list"),
    ([0.25, 1.5], "list_float", "get_attr_float_list"),
    ([True, False], "list_bool", "get_attr_bool_list"),
    (["a", "b"], "list_str", "get_attr_str_list"),
    ([dt.DT_FLOAT, dt.DT_INT64], "list_dtype", "get_attr_tensor_dtype_list"),
    ([[1, 2], [], [3]], "list_list_int", "get_attr_int_list_list"),
]
GETTERS = [getter for _, _, getter in TYPED_VALUES]
# What a getter returns with a failure code: GE's defaults.
DEFAULTS = {"get_attr_int": -1, "get_attr_float": 0.0, "get_attr_bool": False, "get_attr_str": "",
            "get_attr_tensor_dtype": None}
# What the dtype getters return for a DType: numpy types, as GE's do.
NUMPY_OF = {"get_attr_tensor_dtype": np.int32, "get_attr_tensor_dtype_list": [np.float32, np.int64]}


def failure(getter: str, code: int) -> tuple:
    """A getter's answer for a param it cannot return: GE's dtype getters always say NOT_EXITS."""
    if "tensor_dtype" in getter:
        code = ff.FLOW_FUNC_ERR_ATTR_NOT_EXITS
    return code, DEFAULTS.get(getter, [])


def params_of(**values) -> ff.MetaParams:
    typed = {name: typed_param(name, value, WHERE) for name, value in values.items()}
    return ff.MetaParams(NodeFacts("node", 2, 1, "/work", 3, 0, 1, typed))


@pytest.mark.parametrize("value, tag, getter", TYPED_VALUES)
def test_each_getter_returns_its_own_type_and_refuses_the_others(value, tag, getter):
    params = params_of(p=value)
    assert typed_param("p", value, WHERE).tag == tag
    assert getattr(params, getter)("p") == (ff.FLOW_FUNC_SUCCESS, NUMPY_OF.get(getter, value))
    for other in GETTERS:
        if other != getter:
            assert getattr(params, other)("p") == failure(other, ff.FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH), other


@pytest.mark.parametrize("getter", GETTERS)
def test_a_missing_param_is_reported_by_every_getter(getter):
    assert getattr(params_of(), getter)("absent") == failure(getter, ff.FLOW_FUNC_ERR_ATTR_NOT_EXITS)


def test_an_empty_list_fits_every_list_getter_only():
    params = params_of(empty=[])
    for getter in GETTERS:
        expected = (0, []) if "list" in getter else failure(getter, ff.FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH)
        assert getattr(params, getter)("empty") == expected, getter


def test_py_meta_params_is_ges_name_of_meta_params():
    assert ff.PyMetaParams is ff.MetaParams


def test_getters_hand_out_copies():
    params = params_of(grid=[[1, 2]])
    params.get_attr_int_list_list("grid")[1][0].append(9)
    assert params.get_attr_int_list_list("grid") == (0, [[1, 2]])


def test_node_facts_reach_meta_params():
    params = params_of()
    assert (params.get_name(), params.get_input_num(), params.get_output_num(), params.get_work_path(),
            params.get_running_device_id(), params.get_running_instance_id(),
            params.get_running_instance_num()) == ("node", 2, 1, "/work", 3, 0, 1)


def test_numpy_scalars_are_normalized():
    assert typed_param("n", np.int64(7), WHERE) == InitParam("int", 7)
    assert type(typed_param("n", np.int64(7), WHERE).value) is int
    assert typed_param("x", np.float32(0.5), WHERE) == InitParam("float", 0.5)


@pytest.mark.parametrize("value, message", [
    (None, "FuncProcessPoint pp: init param 'p' has unsupported value None; expected a str, int, "
           "float, bool or DType, a list of one of those, or a list of lists of int"),
    ([1, "a"], "FuncProcessPoint pp: init param 'p' list [1, 'a'] mixes types or holds an unsupported "
               "value; a list holds str, int, float, bool or DType values of one type"),
    ([[1.5]], "FuncProcessPoint pp: init param 'p' is a list of lists; only lists of lists of int are "
              "supported, got [[1.5]]"),
    (1 << 63, "FuncProcessPoint pp: init param 'p' value 9223372036854775808 does not fit in int64"),
])
def test_unsupported_init_params_are_refused(value, message):
    with pytest.raises(GeError) as error:
        typed_param("p", value, WHERE)
    assert error.value.error_message == message


@pytest.mark.parametrize("value, _tag, _getter", TYPED_VALUES)
def test_params_survive_the_plan_json(value, _tag, _getter):
    param = typed_param("p", value, WHERE)
    assert from_plan("p", param.to_plan()) == param


def test_a_plan_param_of_unknown_type_is_refused():
    with pytest.raises(GeError, match=r"init param 'p' has type 'complex' in the plan; expected one of"):
        from_plan("p", {"type": "complex", "value": 1})


def test_data_types_map_to_numpy_both_ways():
    for name in dt.__all__:
        if name.startswith("DT_") and name not in ("DT_STRING", "DT_BF16"):
            dtype = getattr(dt, name)
            assert dt.from_numpy(dt.to_numpy(dtype)) == dtype, name
    assert dt.from_numpy(np.dtype("S4")) == dt.DT_STRING


# -- the run context ---------------------------------------------------------------------------

META = TransactionMeta(7, 100, 200, 0, b"hello")


def context(output_num=1, invoke=None, ports=None) -> tuple[ff.MetaRunContext, RunState]:
    """A run context of func Add1, whose outputs are the node's `ports` (default: 0..output_num-1)."""
    ports = range(output_num) if ports is None else ports
    state = RunState("Add1", {port: k for k, port in enumerate(ports)}, META, invoke or (lambda *args: (0, [], "")),
                     ExceptionBoard())
    return ff.MetaRunContext(state), state


def test_alloc_tensor_msg_is_zeroed_aligned_and_carries_the_transaction():
    ctx, _ = context()
    msg = ctx.alloc_tensor_msg([2, 3], dt.DT_FLOAT, align=128)
    array = msg.get_tensor().numpy()
    assert array.shape == (2, 3) and array.dtype == np.float32 and not array.any()
    assert array.ctypes.data % 128 == 0
    assert (msg.get_transaction_id(), msg.get_start_time(), msg.get_end_time()) == (7, 100, 200)
    assert msg.get_msg_type() == ff.MsgType.TENSOR_DATA and msg.get_raw_data() is None


def test_writing_a_tensor_view_fills_the_message():
    ctx, state = context()
    msg = ctx.alloc_tensor_msg([2], dt.DT_INT32)
    msg.get_tensor().numpy()[...] = [4, 5]
    assert ctx.set_output(0, msg) == ff.FLOW_FUNC_SUCCESS
    message = state.outputs[0][1].to_message("")
    assert message.kind is Kind.TENSOR and message.payload.tolist() == [4, 5]
    assert message.meta.user_data == b"hello"


@pytest.mark.parametrize("call, message", [
    (lambda c: c.alloc_tensor_msg([2, -1], dt.DT_INT32),
     "alloc_tensor_msg: shape must be a list of ints >= 0, got [2, -1]"),
    (lambda c: c.alloc_tensor_msg([2], dt.DT_INT32, align=48),
     "alloc_tensor_msg: align must be a power of two in [1, 4096], got 48"),
    (lambda c: c.alloc_raw_data_msg(-1), "alloc_raw_data_msg: size must be an int >= 0, got -1"),
    (lambda c: c.to_flow_msg([1, 2]), "to_flow_msg: expected a Tensor or numpy array, got list"),
])
def test_bad_allocations_raise(call, message):
    ctx, _ = context()
    with pytest.raises(GeError) as error:
        call(ctx)
    assert error.value.error_message == message


@pytest.mark.parametrize("dtype", ["int32", dt.DT_STRING, np.complex64, int, [np.int32]])
def test_alloc_tensor_msg_refuses_other_dtypes_with_a_type_error_as_ge(dtype):
    ctx, _ = context()
    with pytest.raises(TypeError) as error:
        ctx.alloc_tensor_msg([2], dtype)
    assert str(error.value) == ("alloc_tensor_msg: dtype must be a numeric DType such as DT_INT32 or a numpy "
                                f"type such as np.int32, got {dtype!r}")


@pytest.mark.parametrize("dtype", [dt.DT_INT32, np.int32, np.dtype("int32")])
def test_alloc_tensor_msg_takes_a_dtype_or_a_numpy_type_as_ge(dtype):
    ctx, _ = context()
    tensor = ctx.alloc_tensor_msg([2], dtype).get_tensor()
    assert (tensor.numpy().dtype, tensor.get_data_type()) == (np.dtype(np.int32), np.int32)


def test_a_message_tensor_reshapes_in_place():
    ctx, state = context()
    msg = ctx.alloc_tensor_msg([2, 3], dt.DT_INT64)
    tensor = msg.get_tensor()
    assert (tensor.get_data_type(), tensor.get_data_size(), tensor.get_element_cnt()) == (np.int64, 48, 6)
    assert ctx.alloc_tensor_msg([1], tensor.get_data_type()).get_tensor().get_data_type() is np.int64
    assert tensor.reshape([3, 2]) == ff.FLOW_FUNC_SUCCESS and tensor.reshape([4]) == ff.FLOW_FUNC_ERR_PARAM_INVALID
    ctx.set_output(0, msg)
    assert state.outputs[0][1].to_message("").payload.shape == (3, 2)


def test_raw_and_empty_messages():
    ctx, _ = context()
    raw = ctx.alloc_raw_data_msg(16)
    raw.get_raw_data()[:3] = [1, 2, 3]
    assert raw.get_msg_type() == ff.MsgType.RAW_MSG and raw.get_tensor() is None
    assert raw.to_message("").kind is Kind.RAW and raw.to_message("").payload[:3].tolist() == [1, 2, 3]
    empty = ctx.alloc_empty_data_msg()
    assert empty.get_tensor() is None and empty.to_message("").kind is Kind.EMPTY


@pytest.mark.parametrize("call, problem", [
    (lambda c: c.set_output(1, np.zeros(2)),
     "set_output: output index 1 is not an output of func 'Add1'; its outputs are [0]"),
    (lambda c: c.set_output(-1, np.zeros(2)),
     "set_output: output index -1 is not an output of func 'Add1'; its outputs are [0]"),
    (lambda c: c.set_output(0, [1, 2]), "set_output: expected a FlowMsg, Tensor or numpy array, got list"),
    (lambda c: c.set_output(1, c.alloc_empty_data_msg()),
     "set_output: output index 1 is not an output of func 'Add1'; its outputs are [0]"),
    (lambda c: c.set_output(True, c.alloc_empty_data_msg()),
     "set_output: output index True is not an output of func 'Add1'; its outputs are [0]"),
    (lambda c: c.set_output(0, np.zeros(2), balance_config="row"),
     "set_output: balance_config must be a BalanceConfig, got str"),
    (lambda c: c.set_multi_outputs(0, [], ff.BalanceConfig(1, 1)),
     "set_multi_outputs: expected a non-empty list of messages, got []"),
    (lambda c: c.set_multi_outputs(0, [np.zeros(1)], None), "set_multi_outputs: a balance_config is required"),
    (lambda c: c.run_flow_model("g", [], -2),
     "run_flow_model: timeout must be -1 or a number of milliseconds >= 0, got -2"),
    (lambda c: c.run_flow_model("g", [np.zeros(2)], 10),
     "run_flow_model: input 0 must be a tensor FlowMsg, got array([0., 0.])"),
])
def test_calls_with_bad_arguments_return_param_invalid_and_say_why(call, problem):
    ctx, state = context()
    scope = CallScope("node", "Add1")
    with call_scope(scope):
        ret = call(ctx)
    ret = ret[0] if isinstance(ret, tuple) else ret
    assert ret == ff.FLOW_FUNC_ERR_PARAM_INVALID
    assert scope.problems == [problem] and state.outputs == []


def test_run_flow_model_passes_tensors_and_reports_failures():
    calls = []

    def invoke(key, arrays, timeout, meta):
        calls.append((key, [a.tolist() for a in arrays], timeout, meta.transaction_id))
        if key == "missing":
            return ff.FLOW_FUNC_ERR_PARAM_INVALID, [], "no invoked closure is registered as 'missing'"
        return ff.FLOW_FUNC_SUCCESS, [arrays[0] * 2], ""
    ctx, _ = context(invoke=invoke)
    scope = CallScope("node", "AddNN")
    with call_scope(scope):
        ret, outputs = ctx.run_flow_model("double", [ctx.to_flow_msg(np.array([1, 2]))], 100)
        missing = ctx.run_flow_model("missing", [], 100)
    assert ret == 0 and outputs[0].get_tensor().numpy().tolist() == [2, 4]
    assert outputs[0].get_transaction_id() == 7
    assert missing == (ff.FLOW_FUNC_ERR_PARAM_INVALID, [])
    assert scope.problems == ["run_flow_model('missing'): no invoked closure is registered as 'missing'"]
    assert calls == [("double", [[1, 2]], 100, 7), ("missing", [], 100, 7)]


def test_user_data_and_exceptions():
    ctx, state = context()
    assert ctx.get_user_data(5) == bytearray(b"hello")
    assert ctx.get_user_data(2, offset=4) == bytearray(b"o\0")
    with pytest.raises(GeError, match=r"user data offset 63 plus size 2 exceeds 64 bytes"):
        ctx.get_user_data(2, offset=63)
    assert ctx.get_exception() == (False, 0, 0)
    ctx.raise_exception(9900001, 42)
    assert state.raised == (9900001, 42) and ctx.get_exception() == (True, 9900001, 42)
    other, _ = context()
    assert other.get_exception() == (False, 0, 0)  # another board: another model


# -- balance ------------------------------------------------------------------------------------

@pytest.mark.parametrize("policy, routes", [
    (ff.AffinityPolicy.NO_AFFINITY, [1, 3, 6]),
    (ff.AffinityPolicy.ROW_AFFINITY, [1, 1, 2]),
    (ff.AffinityPolicy.COL_AFFINITY, [1, 3, 3]),
])
def test_balance_labels_follow_the_affinity(policy, routes):
    config = ff.BalanceConfig(2, 3, policy)
    config.set_data_pos([(0, 0), (0, 2), (1, 2)])
    assert config.labels(3) == list(zip([1, 3, 6], routes))


def test_set_multi_outputs_labels_each_message():
    ctx, state = context()
    config = ff.BalanceConfig(1, 4, ff.AffinityPolicy.NO_AFFINITY)
    config.set_data_pos([(0, 0), (0, 1), (0, 2), (0, 3)])
    msgs = [ctx.to_flow_msg(np.array([i])) for i in range(4)]
    assert ctx.set_multi_outputs(0, msgs, config) == 0
    messages = [msg.to_message("") for _, msg in state.outputs]
    assert [(m.data_label, m.route_label) for m in messages] == [(1, 1), (2, 2), (3, 3), (4, 4)]


@pytest.mark.parametrize("rows, cols, positions, count, problem", [
    (0, 4, [], 0, "the balance config's row_num must be an int > 0, got 0"),
    (300, 300, [(0, 0)], 1, "the balance config's matrix 300 x 300 has 90000 cells; at most 65536 are allowed"),
    (1, 4, [(0, 4)], 1, "data position (0, 4) lies outside the 1 x 4 matrix"),
    (1, 4, [(0, 0)], 2, "the balance config has 1 data positions for 2 message(s); set_data_pos gives one per message"),
    (1, 4, [(0,)], 1, "data position (0,) must be a (row, col) pair of ints"),
])
def test_balance_configs_that_cannot_route_are_refused(rows, cols, positions, count, problem):
    config = ff.BalanceConfig(rows, cols)
    config.set_data_pos(positions)
    ctx, _ = context()
    scope = CallScope("node", "Add1")
    with call_scope(scope):
        ret = ctx.set_multi_outputs(0, [np.zeros(1)] * count, config) if count else \
            ctx.set_output(0, np.zeros(1), config)
    assert ret == ff.FLOW_FUNC_ERR_PARAM_INVALID
    assert scope.problems == [f"{'set_multi_outputs' if count else 'set_output'}: {problem}"]


# -- messages -------------------------------------------------------------------------------------

def test_flow_msg_round_trips_a_runtime_message():
    message = Message(TransactionMeta(3, 10, 20, 1, b"u"), Kind.TENSOR, np.array([1.5]),
                      route_label=2, data_label=5)
    msg = ff.FlowMsg.from_message(message)
    assert (msg.get_transaction_id(), msg.get_start_time(), msg.get_end_time(), msg.get_flow_flags(),
            msg.get_ret_code(), msg.get_route_label(), msg.get_data_label()) == (3, 10, 20, 1, 0, 2, 5)
    msg.set_start_time(11)
    msg.set_end_time(21)
    msg.set_flow_flags(ff.FLOW_FUNC_SUCCESS)
    back = msg.to_message("")
    assert back.meta == TransactionMeta(3, 11, 21, 0, b"u") and back.payload is message.payload


def test_a_flow_msg_with_a_ret_code_becomes_an_error_message():
    msg = ff.FlowMsg(Kind.TENSOR, np.array([1]), TransactionMeta(4))
    msg.set_ret_code(ff.FLOW_FUNC_FAILED)
    message = msg.to_message("UDF n.f set ret code 564000 on output 0")
    assert message.is_error and message.ret_code == ff.FLOW_FUNC_FAILED
    assert message.error == "UDF n.f set ret code 564000 on output 0"


def test_object_messages_are_pickled_msgs():
    msg = ff.FlowMsg.from_message(Message(TransactionMeta(1), Kind.OBJECT, {"k": 1}))
    assert msg.get_msg_type() == ff.MsgType.PICKLED_MSG and msg.get_object() == {"k": 1}


# -- wrappers, logging, status --------------------------------------------------------------------

class Wrapped:
    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        raise KeyError("no such key")

    @ff.proc_wrapper()
    def Broken(self, run_context, input_flow_msgs):
        return 1 / 0

    @ff.proc_wrapper(func_list=["Alias1", "Alias2"])
    def serve(self, run_context, input_flow_msgs):
        return ff.FLOW_FUNC_SUCCESS


def test_wrappers_turn_exceptions_into_failed_and_note_them(caplog):
    scope = CallScope("node", "Broken")
    with call_scope(scope), caplog.at_level(logging.ERROR, logger="dfir.flow_func"):
        assert Wrapped().Broken(None, []) == ff.FLOW_FUNC_FAILED
        assert Wrapped().init_flow_func(None) == ff.FLOW_FUNC_FAILED
    broken, init = Wrapped.Broken.__wrapped__.__code__, Wrapped.init_flow_func.__wrapped__.__code__
    assert scope.problems == [
        "Wrapped.Broken raised ZeroDivisionError: division by zero\n"
        f"  at test_flow_func.py:{broken.co_firstlineno + 2} in Broken",
        "Wrapped.init_flow_func raised KeyError: 'no such key'\n"
        f"  at test_flow_func.py:{init.co_firstlineno + 2} in init_flow_func"]
    assert "Traceback" in caplog.records[0].getMessage()


def test_find_proc_follows_func_list_then_names():
    from dfir.frontend.flow_func.wrappers import find_proc
    assert [find_proc(Wrapped, name) for name in ("Alias2", "Broken", "serve", "Missing")] == \
        ["serve", "Broken", "serve", None]


def test_func_list_must_be_an_io_spec_or_name_funcs():
    with pytest.raises(GeError) as error:
        ff.proc_wrapper(func_list=[1])
    assert error.value.error_message == ('proc_wrapper: func_list must be an I/O spec such as "i0,i1,o0" or a '
                                         'list of func names, got [1]')


@pytest.mark.parametrize("spec, bad", [("i0,x1,o0", "x1"), ("i0,,o0", ""), ("i-1,o0", "i-1"), ("in0", "in0")])
def test_a_bad_io_spec_is_a_value_error_naming_the_item(spec, bad):
    with pytest.raises(ValueError) as error:
        ff.proc_wrapper(spec)
    assert str(error.value) == (f"proc_wrapper: I/O spec {spec!r} has item {bad!r}, which is none of iN (a node "
                                f"input), oN (a node output) or stream_input")


class Specified:
    @ff.proc_wrapper("i0, i2,o1")
    def first(self, run_context, input_flow_msgs):
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i1,o0,stream_input")
    def second(self, run_context, input_flow_msgs):
        return ff.FLOW_FUNC_SUCCESS


def test_io_specs_are_read_from_the_class_and_registered_as_ge_does():
    from dfir.frontend.flow_func.wrappers import IoSpec, class_io_specs
    assert class_io_specs(Specified) == {"first": IoSpec("i0, i2,o1", (0, 2), (1,), False),
                                         "second": IoSpec("i1,o0,stream_input", (1,), (0,), True)}
    assert ff.FlowFuncRegister.get_flow_func(__name__, "Specified") == {"first": "i0, i2,o1",
                                                                         "second": "i1,o0,stream_input"}
    assert ff.FlowFuncRegister.get_flow_func(__name__, "Unknown") is None
    assert Specified().first(None, []) == ff.FLOW_FUNC_SUCCESS


def test_a_subclass_keeps_inherited_specs_unless_it_overrides_the_method():
    from dfir.frontend.flow_func.wrappers import class_io_specs

    class Sub(Specified):
        def second(self, run_context, input_flow_msgs):
            return ff.FLOW_FUNC_SUCCESS
    assert list(class_io_specs(Sub)) == ["first"]


def test_log_records_carry_the_node_and_instance(caplog):
    scope = CallScope("add_node", "Add1", instance=2)
    with call_scope(scope), caplog.at_level(logging.DEBUG, logger="dfir.flow_func"):
        ff.logger.info("input num %d", 2)
        ff.logger.event("ready")
        ff.logger.error("bad %s", "shape")
        ff.logger.debug("detail")
    messages = [(r.levelname, r.getMessage(), r.udf_node, r.udf_instance, r.udf_event) for r in caplog.records]
    assert messages == [("INFO", "[add_node#2 Add1] input num 2", "add_node", 2, False),
                        ("INFO", "[add_node#2 Add1] ready", "add_node", 2, True),
                        ("ERROR", "[add_node#2 Add1] bad shape", "add_node", 2, False),
                        ("DEBUG", "[add_node#2 Add1] detail", "add_node", 2, False)]
    assert scope.last_error == "bad shape" and scope.explanation() == "; last error logged: bad shape"
    assert ff.logger.get_log_header() == "[]"


def test_status_names():
    assert [status_name(code) for code in (0, 164000, 564000, 9900001, 7, None)] == [
        "FLOW_FUNC_SUCCESS (0)", "FLOW_FUNC_ERR_PARAM_INVALID (164000)", "FLOW_FUNC_FAILED (564000)",
        "9900001 (user-defined)", "7", "None, which is no FLOW_FUNC_* status code (an int)"]


def test_the_cpp_headers_ship_with_the_package():
    headers = set(os.listdir(os.path.join(ff.include_dir(), "flow_func")))
    assert {"flow_func.h", "flow_func_defines.h", "flow_func_log.h", "flow_func_registrar.h", "flow_msg.h",
            "flow_msg_queue.h", "meta_multi_func.h", "meta_params.h", "meta_run_context.h"} <= headers


@pytest.mark.parametrize("kind, payload", [(Kind.TENSOR, np.arange(3)), (Kind.RAW, np.zeros(4, np.uint8)),
                                           (Kind.OBJECT, {"a": 1}), (Kind.EMPTY, None)])
@pytest.mark.parametrize("ret_code, labels", [(0, (0, 0)), (564000, (0, 0)), (0, (3, 2))])
def test_from_message_builds_what_the_constructor_builds(kind, payload, ret_code, labels):
    message = Message(META, kind, payload, ret_code, "why" if ret_code else "", route_label=labels[1],
                      data_label=labels[0])
    fast = ff.FlowMsg.from_message(message)
    slow = ff.FlowMsg(kind, payload, META, ret_code)
    slow.set_labels(*labels)
    for msg in (fast, slow):
        assert msg.meta() is META
    assert [(m.get_msg_type(), m.get_ret_code(), m.get_route_label(), m.get_data_label(), m.get_object(),
             m.get_raw_data() is payload, None if m.get_tensor() is None else m.get_tensor().numpy() is payload)
            for m in (fast, slow)] == [
        (slow.get_msg_type(), ret_code, labels[1], labels[0], slow.get_object(), slow.get_raw_data() is payload,
         None if slow.get_tensor() is None else True)] * 2


def test_an_output_index_is_the_nodes_one_of_the_funcs_outputs():
    """GE's semantics: a func whose outputs_index is [2, 0] sets node outputs 2 and 0; the state
    records each at its position among the func's outputs."""
    ctx, state = context(ports=(2, 0))
    msg = ctx.alloc_empty_data_msg()
    assert ctx.set_output(0, msg) == ctx.set_output(2, np.zeros(1)) == ff.FLOW_FUNC_SUCCESS
    assert ctx.set_output(1, msg) == ff.FLOW_FUNC_ERR_PARAM_INVALID  # the node's, but not this func's
    assert [index for index, _ in state.outputs] == [1, 0]


def test_set_output_of_a_flow_msg_records_it_as_the_general_path_does():
    ctx, state = context(output_num=2)
    msg, array = ctx.alloc_empty_data_msg(), np.zeros(2)
    assert ctx.set_output(1, msg) == ctx.set_output(0, array) == ff.FLOW_FUNC_SUCCESS
    assert [(index, type(out)) for index, out in state.outputs] == [(1, ff.FlowMsg), (0, ff.FlowMsg)]
    assert state.outputs[0][1] is msg and state.outputs[1][1].get_tensor().numpy() is array
