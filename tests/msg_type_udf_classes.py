"""Python UDF project classes for the message type tests (tests/runtime/test_cpp_udf_msg_types.py,
tests/frontend/test_ge_python_udf.py; FuncProcessPoint copies this module into each class's
workspace): they send and receive raw messages of user type 1030."""
import dfir.data_type as dt
import dfir.flow_func as ff


class TypedSender:
    """Sends input 0's tensor bytes as a raw message of user type 1030 on output 0."""

    @ff.proc_wrapper("i0,o0")
    def send(self, run_context, input_flow_msgs):
        data = input_flow_msgs[0].get_tensor().numpy().tobytes()
        out = run_context.alloc_raw_data_msg(len(data))
        out.get_raw_data()[...] = list(data)
        out.set_msg_type(1030)
        return run_context.set_output(0, out)


class TypedReceiver:
    """Answers with [msg type, byte count, first byte] of the raw message on input 0."""

    @ff.proc_wrapper("i0,o0")
    def receive(self, run_context, input_flow_msgs):
        msg = input_flow_msgs[0]
        raw = msg.get_raw_data()
        out = run_context.alloc_tensor_msg([3], dt.DT_INT32)
        out.get_tensor().numpy()[...] = [int(msg.get_msg_type()), len(raw), int(raw[0])]
        return run_context.set_output(0, out)
