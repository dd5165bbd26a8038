// convert-ge-to-linalg sets every ge.graph's backend and, for an IREE backend, lowers the graph to
// func.func @main over upstream dialects in its codegen region. Ranged dimensions become dynamic,
// their bounds stated by util.assume.int; auto falls back to the reference kernels for a graph
// with an op that has no lowering, saying which (convert-ge-to-linalg-invalid.mlir: the errors).
// auto marks the graphs it chose for (`auto`): the compiler may measure them and choose again at
// lowering. onnxruntime runs the graph exported to ONNX at lowering: no codegen region.
// RUN: dfir-opt %s -p convert-ge-to-linalg | filecheck %s
// RUN: dfir-opt %s -p 'convert-ge-to-linalg{backend=onnxruntime}' | filecheck %s --check-prefix=ORT
// RUN: dfir-opt %s -p 'convert-ge-to-linalg{backend=reference}' | filecheck %s --check-prefix=REF
// RUN: dfir-opt %s -p 'convert-ge-to-linalg{auto_backend=iree-cuda}' | filecheck %s --check-prefix=CUDA

// CHECK-LABEL: ge.graph @mlp backend "iree-cpu" attributes {auto} {
// CHECK:       } codegen {
// CHECK-NEXT:    func.func @main(%{{.*}}: tensor<?x4xf32>) -> tensor<?x2xf32> {
// CHECK:           %[[D:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x4xf32>
// CHECK-NEXT:      %[[N:.*]] = "util.assume.int"(%[[D]]) <{assumptions = {{\[\[}}#util.int.assumption<umin = 1, umax = 64>]]}> : (index) -> index
// CHECK:           %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<4x2xf32>
// CHECK:           %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x2xf32>
// CHECK:           %[[Z:.*]] = linalg.fill
// CHECK:           %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %[[W]] : tensor<?x4xf32>, tensor<4x2xf32>) outs(%[[Z]] : tensor<?x2xf32>)
// CHECK:           linalg.generic {{.*}} ins(%[[MM]] : tensor<?x2xf32>)
// CHECK:             arith.maximumf
// CHECK:           func.return
// REF-LABEL:   ge.graph @mlp backend "reference" {
// REF-NOT:     codegen
// ORT-LABEL:   ge.graph @mlp backend "onnxruntime" {
// ORT-NOT:     codegen
// ORT:         ge.graph @bias backend "onnxruntime" {
// CUDA-LABEL:  ge.graph @mlp backend "iree-cuda" attributes {auto} {
// CUDA:        } codegen {
ge.graph @mlp {
  %x = ge.data 0 "x" : !ge.tensor<[1:64, 4], f32>
  %w = ge.const dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %h = ge.matmul %x, %w : (!ge.tensor<[1:64, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[1:64, 2], f32>
  %y = ge.relu %h : !ge.tensor<[1:64, 2], f32>
  ge.output %y : !ge.tensor<[1:64, 2], f32>
}

// Broadcasting: the [4] operand reads only the last loop dimension; an unbounded dimension has
// no umax.
// CHECK-LABEL: ge.graph @bias backend "iree-cpu" attributes {auto} {
// CHECK:         "util.assume.int"(%{{.*}}) <{assumptions = {{\[\[}}#util.int.assumption<umin = 0>]]}>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:           arith.addf
ge.graph @bias {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 4], f32>
  %b = ge.data 1 "b" : !ge.tensor<[4], f32>
  %y = ge.add %x, %b : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[4], f32>) -> !ge.tensor<[-1, 4], f32>
  ge.output %y : !ge.tensor<[-1, 4], f32>
}

// One spatial dimension (NCW): the convolution is a generic over (n, g, m, ow, c, kw) on the
// channel-split views, the taps at `ow * stride + kw * dilation`; max pooling a generic over
// (n, c, ow, kw).
// CHECK-LABEL: ge.graph @conv_1d backend "iree-cpu" attributes {auto} {
// CHECK:         %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 1] high[0, 0, 0]
// CHECK:         %[[X:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0 : i64], [1 : i64, 2 : i64], [3 : i64]] output_shape [%{{.*}}, 1, 2, 9] : tensor<?x2x9xf32> into tensor<?x1x2x9xf32>
// CHECK:         %[[W:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0 : i64, 1 : i64], [2 : i64], [3 : i64]] output_shape [1, 3, 2, 3] : tensor<3x2x3xf32> into tensor<1x3x2x3xf32>
// CHECK:         %[[C:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, ((d3 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[X]], %[[W]] : tensor<?x1x2x9xf32>, tensor<1x3x2x3xf32>)
// CHECK:         tensor.collapse_shape %[[C]] {{\[\[}}0 : i64], [1 : i64, 2 : i64], [3 : i64]] : tensor<?x1x3x4xf32> into tensor<?x3x4xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, ((d2 * 2) + d3))>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK:           arith.maximumf
ge.graph @conv_1d {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 2, 8], f32>
  %w = ge.data 1 "w" : !ge.tensor<[3, 2, 3], f32>
  %y = ge.conv2d %x, %w strides [2] pads [1, 0] dilations [1] groups 1 : (!ge.tensor<[-1, 2, 8], f32>, !ge.tensor<[3, 2, 3], f32>) -> !ge.tensor<[-1, 3, 4], f32>
  %m = ge.max_pool %x kernel [2] strides [2] pads [0, 0] dilations [1] : !ge.tensor<[-1, 2, 8], f32> -> !ge.tensor<[-1, 2, 4], f32>
  ge.output %y, %m : !ge.tensor<[-1, 3, 4], f32>, !ge.tensor<[-1, 2, 4], f32>
}

// A graph's own request wins over the pass option, also under backend=reference.
// CHECK-LABEL: ge.graph @asked backend "iree-cpu" attributes {requested_backend = "iree-cpu"} {
// REF-LABEL:   ge.graph @asked backend "iree-cpu" attributes {requested_backend = "iree-cpu"} {
ge.graph @asked attributes {requested_backend = "iree-cpu"} {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  %y = ge.exp %x : !ge.tensor<[2], f32>
  ge.output %y : !ge.tensor<[2], f32>
}

// Integer pow has no lowering: auto keeps the graph on the reference kernels and says why.
// CHECK-LABEL: ge.graph @ipow backend "reference" attributes {auto, backend_fallback = "ge.pow 'p': no integer form for element type i32"} {
// CHECK-NOT:   codegen
ge.graph @ipow {
  %x = ge.data 0 "x" : !ge.tensor<[2], i32>
  %y = ge.pow %x, %x {name = "p"} : (!ge.tensor<[2], i32>, !ge.tensor<[2], i32>) -> !ge.tensor<[2], i32>
  ge.output %y : !ge.tensor<[2], i32>
}

// A comparison yields i1 elements from arith.cmpf, select reads them, and an activation's
// parameter becomes a constant of the element type.
// CHECK-LABEL: ge.graph @compare_select backend "iree-cpu" attributes {auto} {
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<?x4xi1>)
// CHECK:           arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<?x4xi1>, tensor<?x4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<?x4xf32>)
// CHECK:           arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK:           arith.constant 1.000000e-01 : f32
// CHECK:           arith.mulf
ge.graph @compare_select {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 4], f32>
  %y = ge.data 1 "y" : !ge.tensor<[4], f32>
  %lt = ge.less %x, %y : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[4], f32>) -> !ge.tensor<[-1, 4], i1>
  %m = ge.select %lt, %x, %y : (!ge.tensor<[-1, 4], i1>, !ge.tensor<[-1, 4], f32>, !ge.tensor<[4], f32>) -> !ge.tensor<[-1, 4], f32>
  %a = ge.leaky_relu %m alpha 1.000000e-01 : !ge.tensor<[-1, 4], f32>
  ge.output %a : !ge.tensor<[-1, 4], f32>
}

// A bit cast is arith.bitcast between a float and an integer, nothing between integers of one
// width (signless already), and a zero extension of a bool to its byte.
// CHECK-LABEL: ge.graph @bitcasts backend "iree-cpu" attributes {auto} {
// CHECK:       } codegen {
// CHECK-NEXT:    func.func @main(%[[X:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xi1>) -> (tensor<3xi32>, tensor<3xi8>) {
// CHECK:           linalg.generic {{.*}} ins(%[[X]] : tensor<3xf32>) outs(%{{.*}} : tensor<3xi32>)
// CHECK:             arith.bitcast %{{.*}} : f32 to i32
// CHECK-NOT:       linalg.generic {{.*}} ins(%{{.*}} : tensor<3xi32>)
// CHECK:           linalg.generic {{.*}} ins(%[[B]] : tensor<3xi1>) outs(%{{.*}} : tensor<3xi8>)
// CHECK:             arith.extui %{{.*}} : i1 to i8
ge.graph @bitcasts {
  %x = ge.data 0 "x" : !ge.tensor<[3], f32>
  %b = ge.data 1 "b" : !ge.tensor<[3], i1>
  %u = ge.bitcast %x to ui32 : !ge.tensor<[3], f32> -> !ge.tensor<[3], ui32>
  %i = ge.bitcast %u to i32 : !ge.tensor<[3], ui32> -> !ge.tensor<[3], i32>
  %y = ge.bitcast %b to ui8 : !ge.tensor<[3], i1> -> !ge.tensor<[3], ui8>
  ge.output %i, %y : !ge.tensor<[3], i32>, !ge.tensor<[3], ui8>
}

// A float remainder has no lowering (xDSL's arith has no remf): auto keeps the reference kernels.
// CHECK-LABEL: ge.graph @float_mod backend "reference" attributes {auto, backend_fallback = "ge.mod 'm': no float remainder in upstream arith as xDSL has it (element type f32)"} {
ge.graph @float_mod {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  %y = ge.mod %x, %x fmod {name = "m"} : (!ge.tensor<[2], f32>, !ge.tensor<[2], f32>) -> !ge.tensor<[2], f32>
  ge.output %y : !ge.tensor<[2], f32>
}

// Tile reads the input over (repeat, position) loop pairs and collapses each pair; arg_max finds
// the maximum, then the least position holding it (or a NaN).
// CHECK-LABEL: ge.graph @tile_arg_max backend "iree-cpu" attributes {auto} {
// CHECK:       } codegen {
// CHECK:           %[[T:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x2x1x3xf32>)
// CHECK:           tensor.collapse_shape %[[T]] {{\[\[}}0 : i64, 1 : i64], [2 : i64, 3 : i64]] : tensor<2x2x1x3xf32> into tensor<4x3xf32>
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK:             arith.maximumf
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2xf32>) outs(%{{.*}} : tensor<2xi64>)
// CHECK:             linalg.index 1
// CHECK:             arith.cmpf oeq
// CHECK:             arith.cmpf uno
// CHECK:             arith.minsi
ge.graph @tile_arg_max {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %t = ge.tile %x repeats [2, 1] : !ge.tensor<[2, 3], f32> -> !ge.tensor<[4, 3], f32>
  %i = ge.arg_max %x axis 1 : !ge.tensor<[2, 3], f32> -> !ge.tensor<[2], i64>
  ge.output %t, %i : !ge.tensor<[4, 3], f32>, !ge.tensor<[2], i64>
}

// A scatter is a generic over the data's positions (parallel) and the updates' (reduction), the
// data its initial value: an update whose wrapped index and other coordinates match is added in.
// CHECK-LABEL: ge.graph @scatter_add backend "iree-cpu" attributes {auto} {
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<2x4xi64>, tensor<2x4xf32>) outs(%[[DATA:.*]] : tensor<3x4xf32>)
// CHECK:           arith.cmpi slt
// CHECK:           %[[AT:.*]] = arith.select
// CHECK:           %[[ROW:.*]] = linalg.index 0 : index
// CHECK:           arith.cmpi eq, %[[AT]], %[[ROW]] : index
// CHECK:           %[[U:.*]] = linalg.index 3 : index
// CHECK:           %[[P:.*]] = linalg.index 1 : index
// CHECK:           arith.cmpi eq, %[[U]], %[[P]] : index
// CHECK:           arith.andi
// CHECK:           %[[SUM:.*]] = arith.addf
// CHECK:           arith.select %{{.*}}, %[[SUM]], %{{.*}} : f32
ge.graph @scatter_add {
  %x = ge.data 0 "x" : !ge.tensor<[3, 4], f32>
  %i = ge.data 1 "i" : !ge.tensor<[2, 4], i64>
  %u = ge.data 2 "u" : !ge.tensor<[2, 4], f32>
  %y = ge.scatter_elements %x, %i, %u axis 0 reduction "add" : (!ge.tensor<[3, 4], f32>, !ge.tensor<[2, 4], i64>, !ge.tensor<[2, 4], f32>) -> !ge.tensor<[3, 4], f32>
  ge.output %y : !ge.tensor<[3, 4], f32>
}

// Top-k sorts, which upstream linalg has no form for: auto keeps the graph on the reference kernels.
// CHECK-LABEL: ge.graph @top_k backend "reference" attributes {auto, backend_fallback = "ge.top_k 'best': top-k sorts, and upstream linalg has no sort"} {
// CHECK-NOT:   codegen
ge.graph @top_k {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %v, %i = ge.top_k %x k 2 axis 1 largest sorted {name = "best"} : !ge.tensor<[2, 3], f32> -> (!ge.tensor<[2, 2], f32>, !ge.tensor<[2, 2], i64>)
  ge.output %v, %i : !ge.tensor<[2, 2], f32>, !ge.tensor<[2, 2], i64>
}

// A linear ge.resize: one generic reading two clamped taps per output, weighted by the fraction.
// CHECK-LABEL: ge.graph @resize_linear backend "iree-cpu" attributes {auto} {
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x6xf32>)
// CHECK:           math.floor
// CHECK-COUNT-2:   tensor.extract %{{.*}} : tensor<2x3xf32>
// CHECK:           arith.truncf
ge.graph @resize_linear {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %hw = ge.const dense<[6]> : tensor<1xi64>
  %y = ge.resize %x sizes %hw axes [1] mode "linear" coordinates "half_pixel" : !ge.tensor<[2, 3], f32> sizes !ge.tensor<[1], i64> -> !ge.tensor<[2, 6], f32>
  ge.output %y : !ge.tensor<[2, 6], f32>
}

// Scales fed at run time: each output size is computed by a one-element generic and read back.
// CHECK-LABEL: ge.graph @resize_scaled backend "iree-cpu" attributes {auto} {
// CHECK:         %[[SIZE:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1xi64>)
// CHECK:           arith.fptosi %{{.*}} : f64 to i64
// CHECK:         tensor.extract %[[SIZE]][%{{.*}}] : tensor<1xi64>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<3x?xf32>)
// CHECK-COUNT-1:   tensor.extract %{{.*}} : tensor<3x4xf32>
ge.graph @resize_scaled {
  %x = ge.data 0 "x" : !ge.tensor<[3, 4], f32>
  %s = ge.data 1 "s" : !ge.tensor<[1], f32>
  %y = ge.resize %x scales %s axes [1] mode "nearest" coordinates "asymmetric" nearest_mode "ceil" : !ge.tensor<[3, 4], f32> scales !ge.tensor<[1], f32> -> !ge.tensor<[3, -1], f32>
  ge.output %y : !ge.tensor<[3, -1], f32>
}

// An antialiased resize has no lowering: auto keeps it on the reference kernels. A grid_sample
// reads its grid point per output, then two taps per spatial axis (border padding clamps them).
// CHECK-LABEL: ge.graph @resize_antialias backend "reference" attributes {auto, backend_fallback = "ge.resize 'r': antialias has no lowering"} {
// CHECK-LABEL: ge.graph @grid_sample backend "iree-cpu" attributes {auto} {
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x3x3xf32>)
// CHECK-COUNT-2:   tensor.extract %{{.*}} : tensor<1x3x3x2xf32>
// CHECK-COUNT-4:   tensor.extract %{{.*}} : tensor<1x1x2x2xf32>
ge.graph @resize_antialias {
  %x = ge.data 0 "x" : !ge.tensor<[2, 8], f32>
  %hw = ge.const dense<[3]> : tensor<1xi64>
  %y = ge.resize %x sizes %hw axes [1] mode "linear" coordinates "half_pixel" antialias {name = "r"} : !ge.tensor<[2, 8], f32> sizes !ge.tensor<[1], i64> -> !ge.tensor<[2, 3], f32>
  ge.output %y : !ge.tensor<[2, 3], f32>
}
ge.graph @grid_sample {
  %x = ge.data 0 "x" : !ge.tensor<[1, 1, 2, 2], f32>
  %grid = ge.data 1 "grid" : !ge.tensor<[1, 3, 3, 2], f32>
  %y = ge.grid_sample %x, %grid mode "linear" padding "border" {name = "g"} : (!ge.tensor<[1, 1, 2, 2], f32>, !ge.tensor<[1, 3, 3, 2], f32>) -> !ge.tensor<[1, 1, 3, 3], f32>
  ge.output %y : !ge.tensor<[1, 1, 3, 3], f32>
}

// The forms IREE's own ONNX importer emits, which IREE compiles best: a depthwise convolution
// (one filter per channel) as linalg.depthwise_conv_2d_nchw_chw on the [C, kh, kw] filter, 2-D
// poolings as linalg.pooling_nchw_max / pooling_nchw_sum (an average with no padding divides by
// the kernel's size), a concat as tensor.concat.
// CHECK-LABEL: ge.graph @cnn_forms backend "iree-cpu"
// CHECK:         %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         %[[F:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0 : i64, 1 : i64], [2 : i64], [3 : i64]] : tensor<4x1x3x3xf32> into tensor<4x3x3xf32>
// CHECK-NEXT:    %[[D:.*]] = linalg.depthwise_conv_2d_nchw_chw {strides = dense<1> : vector<2xi64>, dilations = dense<1> : vector<2xi64>} ins(%[[P]], %[[F]] : tensor<?x4x10x10xf32>, tensor<4x3x3xf32>) outs(%{{.*}} : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
// CHECK:         %[[M:.*]] = linalg.pooling_nchw_max {strides = dense<2> : vector<2xi64>, dilations = dense<1> : vector<2xi64>} ins(%[[D]], %{{.*}} : tensor<?x4x8x8xf32>, tensor<2x2xf32>)
// CHECK:         %[[S:.*]] = linalg.pooling_nchw_sum {strides = dense<2> : vector<2xi64>, dilations = dense<1> : vector<2xi64>} ins(%[[D]], %{{.*}} : tensor<?x4x8x8xf32>, tensor<2x2xf32>)
// CHECK-NEXT:    %[[K:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT:    %[[A:.*]] = linalg.generic {{.*}} outs(%[[S]] : tensor<?x4x4x4xf32>)
// CHECK:           arith.divf %{{.*}}, %[[K]] : f32
// CHECK:         tensor.concat dim(1) %[[M]], %[[A]] : (tensor<?x4x4x4xf32>, tensor<?x4x4x4xf32>) -> tensor<?x8x4x4xf32>
ge.graph @cnn_forms {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 4, 8, 8], f32>
  %w = ge.data 1 "w" : !ge.tensor<[4, 1, 3, 3], f32>
  %b = ge.data 2 "b" : !ge.tensor<[4], f32>
  %d = ge.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 4 : (!ge.tensor<[-1, 4, 8, 8], f32>, !ge.tensor<[4, 1, 3, 3], f32>, !ge.tensor<[4], f32>) -> !ge.tensor<[-1, 4, 8, 8], f32>
  %m = ge.max_pool %d kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !ge.tensor<[-1, 4, 8, 8], f32> -> !ge.tensor<[-1, 4, 4, 4], f32>
  %a = ge.avg_pool %d kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !ge.tensor<[-1, 4, 8, 8], f32> -> !ge.tensor<[-1, 4, 4, 4], f32>
  %c = ge.concat %m, %a axis 1 : (!ge.tensor<[-1, 4, 4, 4], f32>, !ge.tensor<[-1, 4, 4, 4], f32>) -> !ge.tensor<[-1, 8, 4, 4], f32>
  ge.output %c : !ge.tensor<[-1, 8, 4, 4], f32>
}

// A strided 1x1 convolution reads a strided slice of its input, made behind an optimization
// barrier, then convolves at stride 1: IREE data-tiles only a convolution of stride 1, and fused
// the slice back into it without the barrier. A dynamic shape keeps the strided convolution (IREE
// cannot resolve a barrier's dynamic dimensions).
// CHECK-LABEL: ge.graph @strided_pointwise backend "iree-cpu"
// CHECK:         %[[S:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, 8, 4, 4] [1, 1, 2, 2] : tensor<2x8x8x8xf32> to tensor<2x8x4x4xf32>
// CHECK-NEXT:    %[[B:.*]] = "util.optimization_barrier"(%[[S]]) : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
// CHECK:         linalg.conv_2d_nchw_fchw {strides = dense<1> : vector<2xi64>, dilations = dense<1> : vector<2xi64>} ins(%[[B]], %{{.*}} : tensor<2x8x4x4xf32>, tensor<16x8x1x1xf32>) outs(%{{.*}} : tensor<2x16x4x4xf32>)
// CHECK-NOT:     util.optimization_barrier
// CHECK:         linalg.conv_2d_nchw_fchw {strides = dense<2> : vector<2xi64>, dilations = dense<1> : vector<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<?x8x8x8xf32>, tensor<16x8x1x1xf32>) outs(%{{.*}} : tensor<?x16x4x4xf32>)
ge.graph @strided_pointwise {
  %x = ge.data 0 "x" : !ge.tensor<[2, 8, 8, 8], f32>
  %d = ge.data 1 "d" : !ge.tensor<[-1, 8, 8, 8], f32>
  %w = ge.data 2 "w" : !ge.tensor<[16, 8, 1, 1], f32>
  %y = ge.conv2d %x, %w strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!ge.tensor<[2, 8, 8, 8], f32>, !ge.tensor<[16, 8, 1, 1], f32>) -> !ge.tensor<[2, 16, 4, 4], f32>
  %z = ge.conv2d %d, %w strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!ge.tensor<[-1, 8, 8, 8], f32>, !ge.tensor<[16, 8, 1, 1], f32>) -> !ge.tensor<[-1, 16, 4, 4], f32>
  ge.output %y, %z : !ge.tensor<[2, 16, 4, 4], f32>, !ge.tensor<[-1, 16, 4, 4], f32>
}

// A batched product with equal static batches is linalg.batch_matmul; a Gemm's trans_b weight
// stays a generic contraction reading it as [n, k] (IREE ran both forms alike).
// CHECK-LABEL: ge.graph @product_forms backend "iree-cpu"
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<10x64xf32>)
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%{{.*}} : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
ge.graph @product_forms {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 64], f32>
  %w = ge.data 1 "w" : !ge.tensor<[10, 64], f32>
  %c = ge.data 2 "c" : !ge.tensor<[10], f32>
  %a = ge.data 3 "a" : !ge.tensor<[2, 4, 8], f32>
  %b = ge.data 4 "b" : !ge.tensor<[2, 8, 3], f32>
  %y = ge.gemm %x, %w, %c alpha 1.0 beta 1.0 trans_b : (!ge.tensor<[-1, 64], f32>, !ge.tensor<[10, 64], f32>, !ge.tensor<[10], f32>) -> !ge.tensor<[-1, 10], f32>
  %z = ge.batch_matmul %a, %b : (!ge.tensor<[2, 4, 8], f32>, !ge.tensor<[2, 8, 3], f32>) -> !ge.tensor<[2, 4, 3], f32>
  ge.output %y, %z : !ge.tensor<[-1, 10], f32>, !ge.tensor<[2, 4, 3], f32>
}
