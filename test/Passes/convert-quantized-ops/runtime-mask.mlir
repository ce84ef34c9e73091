// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file | filecheck %s

// COM: A softmax's masked row max with a mask computed from the inputs (decompose_softmax):
// COM: where(mask, -inf, x) at x's parameters (scale 0.05, zero point 3) is a SELECT of the
// COM: bottom code -128 where the mask holds, x's codes as they are elsewhere.
// CHECK-LABEL: func.func @masked_max_input
// CHECK-DAG:     %[[MASK:.*]] = torch_c.to_builtin_tensor %arg1 : !torch.vtensor<[2,1,4],i1> -> tensor<2x1x4xi1>
// CHECK-DAG:     %[[BOTTOM:.*]] = "tosa.const"() <{values = dense<-128> : tensor<1x1x1xi8>}>
// CHECK-NOT:     tosa.rescale
// CHECK:         %[[Y:.*]] = tosa.select %[[MASK]], %[[BOTTOM]], %{{.*}} : (tensor<2x1x4xi1>, tensor<1x1x1xi8>, tensor<2x3x4xi8>) -> tensor<2x3x4xi8>
// CHECK-NOT:     torch.aten.where
// CHECK-NOT:     torch.aten.scalar_tensor
func.func @masked_max_input(%x: !torch.vtensor<[2,3,4],si8>, %mask: !torch.vtensor<[2,1,4],i1>) -> !torch.vtensor<[2,3,4],si8> {
  %s = torch.constant.float 5.000000e-02
  %zp = torch.constant.int 3
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %inf = torch.constant.float 0xFFF0000000000000
  %f32 = torch.constant.int 6
  %z0 = torch.constant.int 0
  %cpu = torch.constant.device "cpu"
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %zp, %lo, %hi, %i8, %none : !torch.vtensor<[2,3,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,3,4],f32>
  %fill = torch.aten.scalar_tensor %inf, %f32, %z0, %cpu, %none : !torch.float, !torch.int, !torch.int, !torch.Device, !torch.none -> !torch.vtensor<[],f32>
  %w = torch.aten.where.self %mask, %fill, %dx : !torch.vtensor<[2,1,4],i1>, !torch.vtensor<[],f32>, !torch.vtensor<[2,3,4],f32> -> !torch.vtensor<[2,3,4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %w, %s, %zp, %lo, %hi, %i8 : !torch.vtensor<[2,3,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3,4],si8>
  return %q : !torch.vtensor<[2,3,4],si8>
}

// -----

// COM: exp times the kept positions (a bool computed from the inputs): CAST bool -> int32,
// COM: MUL by e's int32 codes (zero point -128 removed), back at e's own parameters.
// CHECK-LABEL: func.func @masked_exp
// CHECK-DAG:     %[[E32:.*]] = tosa.rescale %{{.*}} -> tensor<2x3x4xi32>
// CHECK-DAG:     %[[KEEP:.*]] = tosa.cast %{{.*}} : (tensor<2x1x4xi1>) -> tensor<2x1x4xi32>
// CHECK:         %[[P:.*]] = tosa.mul %[[E32]], %[[KEEP]], %{{.*}} : (tensor<2x3x4xi32>, tensor<2x1x4xi32>, tensor<1xi8>) -> tensor<2x3x4xi32>
// CHECK:         tosa.rescale %[[P]], {{.*}} -> tensor<2x3x4xi8>
// CHECK-NOT:     torch.aten.mul.Tensor
func.func @masked_exp(%e: !torch.vtensor<[2,3,4],si8>, %keep: !torch.vtensor<[2,1,4],i1>) -> !torch.vtensor<[2,3,4],si8> {
  %s = torch.constant.float 0.0039215686274509803
  %zp = torch.constant.int -128
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %de = torch.quantized_decomposed.dequantize_per_tensor %e, %s, %zp, %lo, %hi, %i8, %none : !torch.vtensor<[2,3,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,3,4],f32>
  %m = torch.aten.mul.Tensor %de, %keep : !torch.vtensor<[2,3,4],f32>, !torch.vtensor<[2,1,4],i1> -> !torch.vtensor<[2,3,4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %m, %s, %zp, %lo, %hi, %i8 : !torch.vtensor<[2,3,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3,4],si8>
  return %q : !torch.vtensor<[2,3,4],si8>
}

// -----

// COM: Negative: a where whose selected tensor is not quantized stays as it is.
// CHECK-LABEL: func.func @float_where
// CHECK:         torch.aten.where.self
// CHECK-NOT:     tosa.select
func.func @float_where(%x: !torch.vtensor<[2,3,4],f32>, %mask: !torch.vtensor<[2,1,4],i1>) -> !torch.vtensor<[2,3,4],f32> {
  %none = torch.constant.none
  %inf = torch.constant.float 0xFFF0000000000000
  %f32 = torch.constant.int 6
  %z0 = torch.constant.int 0
  %cpu = torch.constant.device "cpu"
  %fill = torch.aten.scalar_tensor %inf, %f32, %z0, %cpu, %none : !torch.float, !torch.int, !torch.int, !torch.Device, !torch.none -> !torch.vtensor<[],f32>
  %w = torch.aten.where.self %mask, %fill, %x : !torch.vtensor<[2,1,4],i1>, !torch.vtensor<[],f32>, !torch.vtensor<[2,3,4],f32> -> !torch.vtensor<[2,3,4],f32>
  return %w : !torch.vtensor<[2,3,4],f32>
}
