// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file | filecheck %s

// COM: q(dq(x)): the integer value itself when the parameters agree (decompose-gru returns a
// COM: quantized GRU's results as dequantize ops, each followed by the GRU's own quantize).
// CHECK-LABEL: func.func @same_parameters
// CHECK-NOT:     tosa.rescale
// CHECK-NOT:     torch.quantized_decomposed
// CHECK:         return %arg0
func.func @same_parameters(%x: !torch.vtensor<[1,4],si8>) -> !torch.vtensor<[1,4],si8> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %intm128 = torch.constant.int -128
  %int127 = torch.constant.int 127
  %none = torch.constant.none
  %s = torch.constant.float 7.812500e-03
  %d = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %int0, %intm128, %int127, %int1, %none : !torch.vtensor<[1,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %d, %s, %int0, %intm128, %int127, %int1 : !torch.vtensor<[1,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,4],si8>
  return %q : !torch.vtensor<[1,4],si8>
}

// -----

// COM: Other parameters (a GRU output feeding a linear that quantizes its input on its own):
// COM: one RESCALE, 2^-7 -> 2^-6 with zero point 3: ratio 0.5, multiplier 2^30, shift 31.
// CHECK-LABEL: func.func @other_parameters
// CHECK-DAG:     %[[M:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[S:.*]] = "tosa.const"() <{values = dense<31> : tensor<1xi8>}>
// CHECK-DAG:     %[[OZP:.*]] = "tosa.const"() <{values = dense<3> : tensor<1xi8>}>
// CHECK:         tosa.rescale %{{.*}}, %[[M]], %[[S]], %{{.*}}, %[[OZP]] {{.*}} -> tensor<1x4xi8>
// CHECK-NOT:     torch.quantized_decomposed
func.func @other_parameters(%x: !torch.vtensor<[1,4],si8>) -> !torch.vtensor<[1,4],si8> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %intm128 = torch.constant.int -128
  %int127 = torch.constant.int 127
  %none = torch.constant.none
  %s = torch.constant.float 7.812500e-03
  %s2 = torch.constant.float 1.562500e-02
  %d = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %int0, %intm128, %int127, %int1, %none : !torch.vtensor<[1,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %d, %s2, %int3, %intm128, %int127, %int1 : !torch.vtensor<[1,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,4],si8>
  return %q : !torch.vtensor<[1,4],si8>
}
