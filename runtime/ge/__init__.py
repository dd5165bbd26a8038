"""GE graphs at run time: the runners of a `ge_graphs` plan entry (numpy kernels, IREE, onnxruntime)
and the IREE devices of a worker process."""
