"""`Tensor.reshape`: GE's in-place reshape with a status code."""
import numpy as np
import pytest

import dfir.dataflow as df
import dfir.flow_func as ff


def test_reshape_keeps_data_and_describes_the_new_shape():
    tensor = df.Tensor(np.arange(6, dtype=np.int32))
    assert tensor.reshape([2, 3]) == ff.FLOW_FUNC_SUCCESS
    assert tensor.get_shape() == [2, 3]
    assert tensor.tensor_desc == df.TensorDesc(df.DT_INT32, [2, 3])
    np.testing.assert_array_equal(tensor.numpy(), np.arange(6, dtype=np.int32).reshape(2, 3))


@pytest.mark.parametrize("shape", [[4], [-1, 6], [7]])
def test_reshape_to_another_element_count_is_refused_and_changes_nothing(shape):
    tensor = df.Tensor(np.zeros((2, 3), dtype=np.float32))
    assert tensor.reshape(shape) == ff.FLOW_FUNC_ERR_PARAM_INVALID
    assert tensor.get_shape() == [2, 3]
