// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file | filecheck %s

// COM: Attention's (e @ v) / sum(e) (decompose_softmax): num int32 at 1/8 over the row sums
// COM: s int32 at 1/256 (e's 1/255 in the model), to int8 at 1/16, zero point 5. Per row
// COM: (lowering/integer/rows.py): h = max(0, bits(s) - 8) = MAXIMUM(24 - CLZ(s), 0),
// COM: m = ARS(s, h) in [128, 256], TABLE(m - 128) holds 65280 / m - 383 (m <= 128: 0x7F, m = 129:
// COM: 506 - 383 = 0x7B),
// COM: r = entry + 383 in [255, 510]; y = ARS(MUL(num, r, shift 9), h), one RESCALE by
// COM: (1/8) / (1/256) 2^9 / 65280 / (1/16) = 4.0157 (multiplier 1077952576, shift 28).
// CHECK-LABEL: func.func @row_divide
// CHECK:         %[[S:.*]] = tosa.reshape %{{.*}} -> tensor<6x1xi32>
// CHECK:         %[[C24:.*]] = "tosa.const"() <{values = dense<24> : tensor<1x1xi32>}>
// CHECK:         %[[Z:.*]] = tosa.clz %[[S]]
// CHECK:         %[[T:.*]] = tosa.sub %[[C24]], %[[Z]]
// CHECK:         %[[H:.*]] = tosa.maximum %[[T]], %{{.*}}
// CHECK:         %[[M:.*]] = tosa.arithmetic_right_shift %[[S]], %[[H]] {round = true}
// CHECK:         %[[INDEX:.*]] = tosa.rescale %[[M]], {{.*}} -> tensor<6x1xi8>
// CHECK:         %[[TABLE:.*]] = "tosa.const"() <{values = dense<"0x7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7B7773{{.*}}"> : tensor<256xi8>}>
// CHECK:         %[[E:.*]] = tosa.table %[[INDEX]], %[[TABLE]]
// CHECK:         %[[E32:.*]] = tosa.rescale %[[E]], {{.*}} -> tensor<6x1xi32>
// CHECK:         %[[R:.*]] = tosa.add %[[E32]], %{{.*}}
// CHECK:         %[[NUM:.*]] = tosa.reshape %{{.*}} -> tensor<6x4xi32>
// CHECK:         %[[S9:.*]] = "tosa.const"() <{values = dense<9> : tensor<1xi8>}>
// CHECK:         %[[P:.*]] = tosa.mul %[[NUM]], %[[R]], %[[S9]] : (tensor<6x4xi32>, tensor<6x1xi32>, tensor<1xi8>)
// CHECK:         %[[Y:.*]] = tosa.arithmetic_right_shift %[[P]], %[[H]] {round = true}
// CHECK-DAG:     %[[MUL:.*]] = "tosa.const"() <{values = dense<1077952576> : tensor<1xi32>}>
// CHECK-DAG:     %[[S28:.*]] = "tosa.const"() <{values = dense<28> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[Y]], %[[MUL]], %[[S28]], {{.*}} -> tensor<6x4xi8>
// CHECK:         tosa.reshape {{.*}} -> tensor<2x3x4xi8>
// CHECK-NOT:     torch.aten.div
func.func @row_divide(%num: !torch.vtensor<[2,3,4],si32>, %s: !torch.vtensor<[2,3,1],si32>) -> !torch.vtensor<[2,3,4],si8> {
  %sn = torch.constant.float 1.250000e-01
  %ss = torch.constant.float 3.906250e-03
  %sy = torch.constant.float 6.250000e-02
  %z0 = torch.constant.int 0
  %zy = torch.constant.int 5
  %lo32 = torch.constant.int -2147483648
  %hi32 = torch.constant.int 2147483647
  %i32 = torch.constant.int 3
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %dn = torch.quantized_decomposed.dequantize_per_tensor %num, %sn, %z0, %lo32, %hi32, %i32, %none : !torch.vtensor<[2,3,4],si32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,3,4],f32>
  %ds = torch.quantized_decomposed.dequantize_per_tensor %s, %ss, %z0, %lo32, %hi32, %i32, %none : !torch.vtensor<[2,3,1],si32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,3,1],f32>
  %y = torch.aten.div.Tensor %dn, %ds : !torch.vtensor<[2,3,4],f32>, !torch.vtensor<[2,3,1],f32> -> !torch.vtensor<[2,3,4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %sy, %zy, %lo, %hi, %i8 : !torch.vtensor<[2,3,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3,4],si8>
  return %q : !torch.vtensor<[2,3,4],si8>
}

// -----

// COM: A masked softmax's exp times its kept positions (0/1 constants): the constants as int32
// COM: (exact), e's zero point off before the MUL and on again after it.
// CHECK-LABEL: func.func @mask_exp
// CHECK-DAG:     %[[ZE:.*]] = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}>
// CHECK:         %[[E32:.*]] = tosa.rescale %{{.*}}, %{{.*}}, %{{.*}}, %[[ZE]], {{.*}} -> tensor<3x3xi32>
// CHECK:         %[[KEEP:.*]] = "tosa.const"() <{values = dense<{{\[\[}}1, 0, 0], [1, 1, 0], [1, 1, 1{{\]\]}}> : tensor<3x3xi32>}>
// CHECK:         %[[P:.*]] = tosa.mul %[[E32]], %[[KEEP]]
// CHECK:         tosa.rescale %[[P]], {{.*}} -> tensor<3x3xi8>
func.func @mask_exp(%e: !torch.vtensor<[3,3],si8>) -> !torch.vtensor<[3,3],si8> {
  %se = torch.constant.float 0.003921568859368563
  %ze = torch.constant.int -128
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %keep = torch.vtensor.literal(dense<[[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]> : tensor<3x3xf32>) : !torch.vtensor<[3,3],f32>
  %de = torch.quantized_decomposed.dequantize_per_tensor %e, %se, %ze, %lo, %hi, %i8, %none : !torch.vtensor<[3,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[3,3],f32>
  %y = torch.aten.mul.Tensor %de, %keep : !torch.vtensor<[3,3],f32>, !torch.vtensor<[3,3],f32> -> !torch.vtensor<[3,3],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %se, %ze, %lo, %hi, %i8 : !torch.vtensor<[3,3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[3,3],si8>
  return %q : !torch.vtensor<[3,3],si8>
}
