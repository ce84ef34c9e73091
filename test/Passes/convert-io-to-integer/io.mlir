// RUN: torch2tosa-opt %s --convert-io-to-integer | filecheck %s

// COM: the quantized input and the dequantized result become si8 with their parameters
// COM: recorded on the module; the float second input stays float (unit entry).
// CHECK: module attributes {torch2tosa.io_quantization = {inputs = [{scale = 5.000000e-01 : f64, type = "i8", zero_point = -3 : i64}, unit], outputs = [{scale = 2.500000e-01 : f64, type = "i8", zero_point = 7 : i64}]}}
// CHECK-LABEL: func.func @main(%arg0: !torch.vtensor<[4],si8>, %arg1: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],si8>
// CHECK-NOT:     torch.quantized_decomposed.quantize_per_tensor %arg0
// CHECK:         %[[D:.*]] = torch.quantized_decomposed.dequantize_per_tensor %arg0
// CHECK:         %[[Q:.*]] = torch.quantized_decomposed.quantize_per_tensor
// CHECK-NOT:     torch.quantized_decomposed.dequantize_per_tensor %[[Q]]
// CHECK:         return %[[Q]] : !torch.vtensor<[4],si8>
func.func @main(%x: !torch.vtensor<[4],f32>, %f: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %s = torch.constant.float 5.000000e-01
  %so = torch.constant.float 2.500000e-01
  %z = torch.constant.int -3
  %zo = torch.constant.int 7
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %t = torch.constant.int 1
  %none = torch.constant.none
  %q = torch.quantized_decomposed.quantize_per_tensor %x, %s, %z, %lo, %hi, %t : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  %d = torch.quantized_decomposed.dequantize_per_tensor %q, %s, %z, %lo, %hi, %t, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %a = torch.aten.relu %d : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %q2 = torch.quantized_decomposed.quantize_per_tensor %a, %so, %zo, %lo, %hi, %t : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  %d2 = torch.quantized_decomposed.dequantize_per_tensor %q2, %so, %zo, %lo, %hi, %t, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  return %d2 : !torch.vtensor<[4],f32>
}
