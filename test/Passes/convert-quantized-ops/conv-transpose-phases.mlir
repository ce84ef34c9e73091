// RUN: torch2tosa-opt %s --convert-quantized-ops=target=ethos-u55-128 --split-input-file | filecheck %s --check-prefix=U55
// RUN: torch2tosa-opt %s --convert-quantized-ops=target=ethos-u85-256 --split-input-file | filecheck %s --check-prefix=U85

// COM: ConvTranspose1d(1, 1, 6, stride=3, padding=1) on x [1, 1, 3]: the U55 runs no
// COM: TRANSPOSE_CONV2D of stride 3, so it becomes one stride-1 conv2d by phases: M = 2 taps,
// COM: the phase r taking W[3 + r], W[r] (reversed), 3 output channels, x padded by 1 on both
// COM: sides: [1,1,4,3], reshaped to the 12 uncropped columns (q*3 + r), the padding cropped
// COM: (columns 1..10).
// U55-LABEL: func.func @conv_transpose_stride3
// U55-NOT:     tosa.transpose_conv2d
// U55-DAG:     %[[W:.*]] = "tosa.const"() <{values = dense<{{\[\[\[\[}}4], [1]]], {{\[\[\[}}5], [2]]], {{\[\[\[}}6], [3]]]]> : tensor<3x1x2x1xi8>}>
// U55-DAG:     %[[B:.*]] = "tosa.const"() <{values = dense<0> : tensor<3xi32>}>
// U55:         %[[ACC:.*]] = tosa.conv2d %{{.*}}, %[[W]], %[[B]], %{{.*}}, %{{.*}} {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 1>, stride = array<i64: 1, 1>} : {{.*}} -> tensor<1x1x4x3xi32>
// U55:         %[[U:.*]] = tosa.reshape %[[ACC]], %{{.*}} : (tensor<1x1x4x3xi32>, !tosa.shape<4>) -> tensor<1x1x12x1xi32>
// U55-DAG:     %[[START:.*]] = tosa.const_shape {values = dense<[0, 0, 1, 0]> : tensor<4xindex>}
// U55:         %[[Y:.*]] = tosa.slice %[[U]], %[[START]], %{{.*}} : (tensor<1x1x12x1xi32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x1x10x1xi32>
// U55:         tosa.rescale %[[Y]]
// U55:         return

// COM: The U85 runs it as it is.
// U85-LABEL: func.func @conv_transpose_stride3
// U85:         tosa.transpose_conv2d {{.*}} {acc_type = i32, out_pad = array<i64: 0, 0, -1, -1>, stride = array<i64: 1, 3>}
// U85-NOT:     tosa.conv2d
// U85:         return
func.func @conv_transpose_stride3(%x: !torch.vtensor<[1,1,3],si8>) -> !torch.vtensor<[1,1,10],si8> {
  %w = torch.vtensor.literal(dense<[[[1, 2, 3, 4, 5, 6]]]> : tensor<1x1x6xi8>) : !torch.vtensor<[1,1,6],si8>
  %ws = torch.vtensor.literal(dense<[0.25]> : tensor<1xf32>) : !torch.vtensor<[1],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<1xi64>) : !torch.vtensor<[1],si64>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %intm127 = torch.constant.int -127
  %intm128 = torch.constant.int -128
  %int127 = torch.constant.int 127
  %half = torch.constant.float 5.000000e-01
  %one = torch.constant.float 1.000000e+00
  %none = torch.constant.none
  %true = torch.constant.bool true
  %wd = torch.quantized_decomposed.dequantize_per_channel %w, %ws, %wz, %int1, %intm127, %int127, %int1, %none : !torch.vtensor<[1,1,6],si8>, !torch.vtensor<[1],f32>, !torch.vtensor<[1],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,6],f32>
  %xd = torch.quantized_decomposed.dequantize_per_tensor %x, %half, %int0, %intm128, %int127, %int1, %none : !torch.vtensor<[1,1,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,3],f32>
  %stride = torch.prim.ListConstruct %int3 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %opad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %y = torch.aten.convolution %xd, %wd, %none, %stride, %pad, %dil, %true, %opad, %int1 : !torch.vtensor<[1,1,3],f32>, !torch.vtensor<[1,1,6],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,1,10],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %one, %int0, %intm128, %int127, %int1 : !torch.vtensor<[1,1,10],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,10],si8>
  return %q : !torch.vtensor<[1,1,10],si8>
}
