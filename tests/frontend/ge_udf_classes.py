"""UDF classes written the way GE's Python UDF samples write them (plain classes whose procs carry
I/O specs), for tests/frontend/test_ge_python_udf.py; FuncProcessPoint copies this module into
each class's workspace."""
import os

import dfir.data_type as dt
import dfir.flow_func as ff


class Router:
    """One func on input 0: an input [0] sets outputs 0 and 1, anything else outputs 2 and 3."""

    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        ff.FlowFuncLogger().info("Get attr int [%d]", meta_params.get_attr_int("name")[1])
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i0,o0,o1,o2,o3")
    def route(self, run_context, input_flow_msgs):
        for msg in input_flow_msgs:
            if msg.get_ret_code() != ff.FLOW_FUNC_SUCCESS or msg.get_msg_type() != ff.MSG_TYPE_TENSOR_DATA:
                return ff.FLOW_FUNC_FAILED
        ramp = run_context.alloc_tensor_msg([3], dt.DT_INT32)
        ones = run_context.alloc_tensor_msg([3], dt.DT_INT32)
        ramp.get_tensor().numpy()[...] = [1, 2, 3]
        ones.get_tensor().numpy()[...] = [1, 1, 1]
        first = input_flow_msgs[0].get_tensor().numpy() == [0]
        pairs = [(0, ramp), (1, ones)] if first else [(2, ramp), (3, ramp)]
        for index, msg in pairs:
            if run_context.set_output(index, msg) != ff.FLOW_FUNC_SUCCESS:
                return ff.FLOW_FUNC_FAILED
        return ff.FLOW_FUNC_SUCCESS


class TwoAdds:
    """Two funcs: add_plain on inputs 0, 1 to output 0 (a + b); add_double on 2, 3 to output 1 (a + 2b)."""

    def __init__(self):
        self.count = 0

    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        return ff.FLOW_FUNC_SUCCESS if meta_params.get_input_num() == 4 else ff.FLOW_FUNC_FAILED

    @ff.proc_wrapper("i0,i1,o0")
    def add_plain(self, run_context, input_flow_msgs):
        return self._add(run_context, input_flow_msgs, 1, 0)

    @ff.proc_wrapper("i2,i3,o1")
    def add_double(self, run_context, input_flow_msgs):
        return self._add(run_context, input_flow_msgs, 2, 1)

    def _add(self, run_context, input_flow_msgs, factor, output):
        first, second = (msg.get_tensor() for msg in input_flow_msgs)
        if first.get_data_type() != second.get_data_type() or first.get_shape() != second.get_shape():
            return ff.FLOW_FUNC_FAILED
        out = run_context.alloc_tensor_msg(first.get_shape(), first.get_data_type())
        out.get_tensor().numpy()[...] = first.numpy() + factor * second.numpy()
        self.count += 1
        return run_context.set_output(output, out)


class Placed:
    """Reports where it runs: the placement getters of `import dataflow as df` and of MetaParams."""

    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        import dfir.dataflow as df
        self.seen = [df.get_running_device_id(), df.get_running_instance_id(), df.get_running_instance_num(),
                     meta_params.get_running_device_id(), meta_params.get_running_instance_id(),
                     meta_params.get_running_instance_num()]
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i0,o0")
    def report(self, run_context, input_flow_msgs):
        import dfir.dataflow as df
        seen = self.seen + [df.get_running_instance_id(), os.getpid()]
        return run_context.set_output(0, run_context.to_flow_msg(__import__("numpy").array(seen)))


class Unwrapped:
    """A class whose proc carries no I/O spec."""

    @ff.proc_wrapper()
    def proc(self, run_context, input_flow_msgs):
        return ff.FLOW_FUNC_SUCCESS


class GapInInputs:
    @ff.proc_wrapper("i0,i2,o0")
    def proc(self, run_context, input_flow_msgs):
        return ff.FLOW_FUNC_SUCCESS


class RepeatedInput:
    @ff.proc_wrapper("i0,o0")
    def first(self, run_context, input_flow_msgs):
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i0,o1")
    def second(self, run_context, input_flow_msgs):
        return ff.FLOW_FUNC_SUCCESS


class GapInOutputs:
    @ff.proc_wrapper("i0,o1")
    def proc(self, run_context, input_flow_msgs):
        return ff.FLOW_FUNC_SUCCESS

