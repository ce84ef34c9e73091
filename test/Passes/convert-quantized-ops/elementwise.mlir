// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file | filecheck %s

// COM: add: inputs (scale 0.5, zp 1) and (0.25, zp -2) go to int32 at the common scale
// COM: 2 * 0.5 / 2^20 = 2^-20: ratios 2^19 (multiplier 2^30, shift 11) and 2^18 (shift 12);
// COM: the sum goes back by 2^-20 / 1.0 (shift 50) to the output zero point 3.

// CHECK-LABEL: func.func @add
// CHECK-NOT:     torch.aten.add.Tensor
// CHECK-DAG:     %[[M:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[S11:.*]] = "tosa.const"() <{values = dense<11> : tensor<1xi8>}>
// CHECK-DAG:     %[[ZA:.*]] = "tosa.const"() <{values = dense<1> : tensor<1xi8>}>
// CHECK:         %[[A:.*]] = tosa.rescale %{{.*}}, %[[M]], %[[S11]], %[[ZA]], %{{.*}} {{.*}} : {{.*}} -> tensor<4xi32>
// CHECK-DAG:     %[[S12:.*]] = "tosa.const"() <{values = dense<12> : tensor<1xi8>}>
// CHECK-DAG:     %[[ZB:.*]] = "tosa.const"() <{values = dense<-2> : tensor<1xi8>}>
// CHECK:         %[[B:.*]] = tosa.rescale %{{.*}}, %{{.*}}, %[[S12]], %[[ZB]], %{{.*}} {{.*}} -> tensor<4xi32>
// CHECK:         %[[SUM:.*]] = tosa.add %[[A]], %[[B]] : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-DAG:     %[[S50:.*]] = "tosa.const"() <{values = dense<50> : tensor<1xi8>}>
// CHECK-DAG:     %[[ZO:.*]] = "tosa.const"() <{values = dense<3> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[SUM]], %{{.*}}, %[[S50]], %{{.*}}, %[[ZO]] {{{.*}}per_channel = false{{.*}}} : {{.*}} -> tensor<4xi8>
// CHECK-NOT:     torch.quantized_decomposed
// CHECK:         return
func.func @add(%a: !torch.vtensor<[4],si8>, %b: !torch.vtensor<[4],si8>) -> !torch.vtensor<[4],si8> {
  %half = torch.constant.float 5.000000e-01
  %quarter = torch.constant.float 2.500000e-01
  %one = torch.constant.float 1.000000e+00
  %z1 = torch.constant.int 1
  %zm2 = torch.constant.int -2
  %z3 = torch.constant.int 3
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %half, %z1, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %db = torch.quantized_decomposed.dequantize_per_tensor %b, %quarter, %zm2, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %s = torch.aten.add.Tensor %da, %db, %z1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %s, %one, %z3, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  return %q : !torch.vtensor<[4],si8>
}

// -----

// COM: mul: (a - 1) * (b + 2) in int32, then by 0.5 * 0.25 / 0.125 = 1 (multiplier 2^30,
// COM: shift 30) to zero point 0. TOSA's MUL has a shift operand of 0.

// CHECK-LABEL: func.func @mul
// CHECK:         %[[A:.*]] = tosa.rescale %{{.*}} -> tensor<4xi32>
// CHECK:         %[[B:.*]] = tosa.rescale %{{.*}} -> tensor<4xi32>
// CHECK:         %[[P:.*]] = tosa.mul %[[A]], %[[B]], %{{.*}} : (tensor<4xi32>, tensor<4xi32>, tensor<1xi8>) -> tensor<4xi32>
// CHECK-DAG:     %[[M30:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[S30:.*]] = "tosa.const"() <{values = dense<30> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[P]], %[[M30]], %[[S30]], %{{.*}} -> tensor<4xi8>
// CHECK:         return
func.func @mul(%a: !torch.vtensor<[4],si8>, %b: !torch.vtensor<[4],si8>) -> !torch.vtensor<[4],si8> {
  %half = torch.constant.float 5.000000e-01
  %quarter = torch.constant.float 2.500000e-01
  %eighth = torch.constant.float 1.250000e-01
  %z0 = torch.constant.int 0
  %z1 = torch.constant.int 1
  %zm2 = torch.constant.int -2
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %half, %z1, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %db = torch.quantized_decomposed.dequantize_per_tensor %b, %quarter, %zm2, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %p = torch.aten.mul.Tensor %da, %db : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %p, %eighth, %z0, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  return %q : !torch.vtensor<[4],si8>
}

// -----

// COM: mean over the last dim of [1, 2, 8]: sum in int32, then by 0.5 / (8 * 0.25) = 0.25
// COM: (multiplier 2^30, shift 32) to the output zero point -1.

// CHECK-LABEL: func.func @mean
// CHECK:         %[[X:.*]] = tosa.rescale %{{.*}} -> tensor<1x2x8xi32>
// CHECK:         %[[SUM:.*]] = tosa.reduce_sum %[[X]] {axis = 2 : i32} : (tensor<1x2x8xi32>) -> tensor<1x2x1xi32>
// CHECK-DAG:     %[[S32:.*]] = "tosa.const"() <{values = dense<32> : tensor<1xi8>}>
// CHECK-DAG:     %[[ZO:.*]] = "tosa.const"() <{values = dense<-1> : tensor<1xi8>}>
// CHECK:         %[[Y:.*]] = tosa.rescale %[[SUM]], %{{.*}}, %[[S32]], %{{.*}}, %[[ZO]] {{.*}} -> tensor<1x2x1xi8>
// CHECK:         tosa.reshape %[[Y]], %{{.*}} -> tensor<1x2xi8>
func.func @mean(%x: !torch.vtensor<[1,2,8],si8>) -> !torch.vtensor<[1,2],si8> {
  %half = torch.constant.float 5.000000e-01
  %quarter = torch.constant.float 2.500000e-01
  %z0 = torch.constant.int 0
  %zm1 = torch.constant.int -1
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int2 = torch.constant.int 2
  %dims = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %half, %z0, %lo, %hi, %i8, %none : !torch.vtensor<[1,2,8],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,8],f32>
  %m = torch.aten.mean.dim %dx, %dims, %false, %none : !torch.vtensor<[1,2,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,2],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %m, %quarter, %zm1, %lo, %hi, %i8 : !torch.vtensor<[1,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2],si8>
  return %q : !torch.vtensor<[1,2],si8>
}

// -----

// COM: sigmoid: one 256-entry int8 TABLE on the integers, no RESCALE.

// CHECK-LABEL: func.func @sigmoid
// CHECK-NOT:     tosa.rescale
// CHECK:         %[[T:.*]] = "tosa.const"() <{values = dense<"0x{{[0-9A-F]+}}"> : tensor<256xi8>}>
// CHECK:         tosa.table %{{.*}}, %[[T]] : (tensor<4xi8>, tensor<256xi8>) -> tensor<4xi8>
// CHECK-NOT:     torch.aten.sigmoid
// CHECK:         return
func.func @sigmoid(%x: !torch.vtensor<[4],si8>) -> !torch.vtensor<[4],si8> {
  %in = torch.constant.float 6.250000e-02
  %out = torch.constant.float 3.906250e-03
  %z0 = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %in, %z0, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %y = torch.aten.sigmoid %dx : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %out, %lo, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  return %q : !torch.vtensor<[4],si8>
}

// -----

// COM: a layout op with the same parameters on both sides is just the data movement.

// CHECK-LABEL: func.func @permute_shares_qparams
// CHECK-NOT:     tosa.rescale
// CHECK:         tosa.transpose %{{.*}} {perms = array<i32: 0, 2, 1>} : (tensor<1x2x3xi8>) -> tensor<1x3x2xi8>
// CHECK:         return
func.func @permute_shares_qparams(%x: !torch.vtensor<[1,2,3],si8>) -> !torch.vtensor<[1,3,2],si8> {
  %s = torch.constant.float 5.000000e-01
  %z = torch.constant.int 4
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %perm = torch.prim.ListConstruct %int0, %int2, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %i8, %none : !torch.vtensor<[1,2,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,3],f32>
  %p = torch.aten.permute %dx, %perm : !torch.vtensor<[1,2,3],f32>, !torch.list<int> -> !torch.vtensor<[1,3,2],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %p, %s, %z, %lo, %hi, %i8 : !torch.vtensor<[1,3,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,3,2],si8>
  return %q : !torch.vtensor<[1,3,2],si8>
}

// -----

// COM: q(dq(x)) with other parameters (PT2E's requantization where a fixed range, e.g. a
// COM: softmax's (0, 1], meets an observed one): one RESCALE by 0.5 / 0.25 = 2 (multiplier
// COM: 2^30, shift 29) from zero point 1 to -2; the dequantize is gone.
// CHECK-LABEL: func.func @requantize
// CHECK-DAG:     %[[M:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[S29:.*]] = "tosa.const"() <{values = dense<29> : tensor<1xi8>}>
// CHECK-DAG:     %[[ZI:.*]] = "tosa.const"() <{values = dense<1> : tensor<1xi8>}>
// CHECK-DAG:     %[[ZO:.*]] = "tosa.const"() <{values = dense<-2> : tensor<1xi8>}>
// CHECK:         %[[Y:.*]] = tosa.rescale %{{.*}}, %[[M]], %[[S29]], %[[ZI]], %[[ZO]] {{.*}} : (tensor<4xi8>, {{.*}}) -> tensor<4xi8>
// CHECK-NOT:     torch.quantized_decomposed
// CHECK:         return
func.func @requantize(%a: !torch.vtensor<[4],si8>) -> !torch.vtensor<[4],si8> {
  %half = torch.constant.float 5.000000e-01
  %quarter = torch.constant.float 2.500000e-01
  %z1 = torch.constant.int 1
  %zm2 = torch.constant.int -2
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %half, %z1, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %da, %quarter, %zm2, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  return %q : !torch.vtensor<[4],si8>
}
