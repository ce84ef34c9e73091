// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file | filecheck %s

// COM: layer_norm over 4 values per row (lowering/integer/norms.py), x at 1/16 (zero point 0),
// COM: y at 1/32, eps 1e-5, weight [1, -0.5, 2, 0.25], bias [0, 0.5, -1, 0.25]:
// COM: * centring: 4 x 255 < 2^10, so b = 22 - 10 = 12: S = REDUCE_SUM(x 2^12) (multiplier
// COM:   2^30, shift 18) and d = x A - S with A = 4 2^12 = 16384 (shift 16): exact.
// COM: * |d| <= 16384 x 255 < 2^22: 4 d^2 < 2^46, so MUL(d, d, shift 16) keeps the sum below 2^30.
// COM: * V's unit is (2^-4 / 2^14)^2 2^16 = 2^-20: E = 1e-5 x 4 x 2^20 = 41.9 -> 42 (< 128: W may
// COM:   have fewer than 7 bits, so MAXIMUM keeps h >= 0).
// COM: * h = ceil((bits(W) - 8) / 2) = ARS(24 - CLZ(W), 1); m = ARS(W, 2h) in [64, 256]; the
// COM:   TABLE reads m - 128 (RESCALE to zero point -128): entry 4080 / sqrt(m) - 383, 0x7F for
// COM:   m <= 64 (4080 / 8 - 383 = 127), 0x7B for m = 65 (506 - 383), 0x80 for m = 255 (255 - 383).
// COM: * r = entry + 383 (<= 510: d r < 2^31, MUL shift 0), then ARS(d r, h) per row.
// COM: * weight: top 2, factors round(w / 2 x 2^15) = [16384, -8192, 32768, 4096]; the bias as int32
// COM:   in the weighted unit; one RESCALE to y.
// CHECK-LABEL: func.func @layer_norm
// CHECK-DAG:     %[[M30:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[S18:.*]] = "tosa.const"() <{values = dense<18> : tensor<1xi8>}>
// CHECK:         %[[XB:.*]] = tosa.rescale %[[X:.*]], %[[M30]], %[[S18]], {{.*}} -> tensor<2x4xi32>
// CHECK:         %[[S:.*]] = tosa.reduce_sum %[[XB]] {axis = 1 : i32} : (tensor<2x4xi32>) -> tensor<2x1xi32>
// CHECK:         %[[S16:.*]] = "tosa.const"() <{values = dense<16> : tensor<1xi8>}>
// CHECK:         %[[XA:.*]] = tosa.rescale %[[X]], %{{.*}}, %[[S16]], {{.*}} -> tensor<2x4xi32>
// CHECK:         %[[D:.*]] = tosa.sub %[[XA]], %[[S]] : (tensor<2x4xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
// CHECK:         %[[J:.*]] = "tosa.const"() <{values = dense<16> : tensor<1xi8>}>
// CHECK:         %[[SQ:.*]] = tosa.mul %[[D]], %[[D]], %[[J]]
// CHECK:         %[[V:.*]] = tosa.reduce_sum %[[SQ]] {axis = 1 : i32}
// CHECK:         %[[E:.*]] = "tosa.const"() <{values = dense<42> : tensor<1x1xi32>}>
// CHECK:         %[[W:.*]] = tosa.add %[[V]], %[[E]]
// CHECK:         %[[C24:.*]] = "tosa.const"() <{values = dense<24> : tensor<1x1xi32>}>
// CHECK:         %[[Z:.*]] = tosa.clz %[[W]]
// CHECK:         %[[T:.*]] = tosa.sub %[[C24]], %[[Z]]
// CHECK:         %[[HALF:.*]] = tosa.arithmetic_right_shift %[[T]], %{{.*}} {round = true}
// CHECK:         %[[H:.*]] = tosa.maximum %[[HALF]], %{{.*}}
// CHECK:         %[[TWO_H:.*]] = tosa.add %[[H]], %[[H]]
// CHECK:         %[[MANT:.*]] = tosa.arithmetic_right_shift %[[W]], %[[TWO_H]] {round = true}
// CHECK:         %[[ZM128:.*]] = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}>
// CHECK:         %[[INDEX:.*]] = tosa.rescale %[[MANT]], %{{.*}}, %{{.*}}, %{{.*}}, %[[ZM128]] {{.*}} -> tensor<2x1xi8>
// CHECK:         %[[RSQRT:.*]] = "tosa.const"() <{values = dense<"0x7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7B7773706C6965625F5B5855524F4C494644413E3C393634312F2D2A282624211F1D1B19171513110F0D0B0A0806040301FFFDFCFAF9F7F5F4F2F1EFEEECEBEAE8E7E5E4E3E1E0DFDEDCDBDAD9D7D6D5D4D3D2D0CFCECDCCCBCAC9C8C7C6C5C4C3C2C1C0BFBEBDBCBBBAB9B8B7B6B5B5B4B3B2B1B0AFAFAEADACABABAAA9A8A7A7A6A5A4A4A3A2A1A1A09F9F9E9D9D9C9B9B9A999998979796959594939392929190908F8F8E8D8D8C8C8B8B8A898988888787868685858484838382828180"> : tensor<256xi8>}>
// CHECK:         %[[ENTRY:.*]] = tosa.table %[[INDEX]], %[[RSQRT]]
// CHECK:         %[[ENTRY32:.*]] = tosa.rescale %[[ENTRY]], {{.*}} -> tensor<2x1xi32>
// CHECK:         %[[OFFSET:.*]] = "tosa.const"() <{values = dense<383> : tensor<1x1xi32>}>
// CHECK:         %[[R:.*]] = tosa.add %[[ENTRY32]], %[[OFFSET]]
// CHECK:         %[[SHIFT0:.*]] = "tosa.const"() <{values = dense<0> : tensor<1xi8>}>
// CHECK:         %[[DR:.*]] = tosa.mul %[[D]], %[[R]], %[[SHIFT0]] : (tensor<2x4xi32>, tensor<2x1xi32>, tensor<1xi8>) -> tensor<2x4xi32>
// CHECK:         %[[Y:.*]] = tosa.arithmetic_right_shift %[[DR]], %[[H]] {round = true} : (tensor<2x4xi32>, tensor<2x1xi32>)
// CHECK:         %[[G:.*]] = "tosa.const"() <{values = dense<{{\[\[}}16384, -8192, 32768, 4096{{\]\]}}> : tensor<1x4xi32>}>
// CHECK:         %[[YG:.*]] = tosa.mul %[[Y]], %[[G]]
// CHECK:         %[[YB:.*]] = tosa.add %[[YG]], %{{.*}} : (tensor<2x4xi32>, tensor<1x4xi32>)
// CHECK:         %[[OUT:.*]] = tosa.rescale %[[YB]], {{.*}} -> tensor<2x4xi8>
// CHECK-NOT:     torch.aten.layer_norm
// CHECK:         torch_c.from_builtin_tensor %[[OUT]]
func.func @layer_norm(%x: !torch.vtensor<[2,4],si8>) -> !torch.vtensor<[2,4],si8> {
  %sx = torch.constant.float 6.250000e-02
  %sy = torch.constant.float 3.125000e-02
  %z0 = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %eps = torch.constant.float 1.000000e-05
  %int4 = torch.constant.int 4
  %shape = torch.prim.ListConstruct %int4 : (!torch.int) -> !torch.list<int>
  %w = torch.vtensor.literal(dense<[1.000000e+00, -5.000000e-01, 2.000000e+00, 2.500000e-01]> : tensor<4xf32>) : !torch.vtensor<[4],f32>
  %b = torch.vtensor.literal(dense<[0.000000e+00, 5.000000e-01, -1.000000e+00, 2.500000e-01]> : tensor<4xf32>) : !torch.vtensor<[4],f32>
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %sx, %z0, %lo, %hi, %i8, %none : !torch.vtensor<[2,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,4],f32>
  %y = torch.aten.layer_norm %dx, %shape, %w, %b, %eps, %false : !torch.vtensor<[2,4],f32>, !torch.list<int>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.float, !torch.bool -> !torch.vtensor<[2,4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %sy, %z0, %lo, %hi, %i8 : !torch.vtensor<[2,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,4],si8>
  return %q : !torch.vtensor<[2,4],si8>
}

// -----

// COM: group_norm with 2 groups of 2 channels x 3 positions: x viewed as [2, 6] (rows n x g),
// COM: zero point -3 taken off by the RESCALEs; 6 x 255 < 2^11, b = 11, A = 6 2^11 = 12288
// COM: (multiplier 0.75 2^31, shift 17). One positive weight (0.5) goes into the output RESCALE
// COM: (no MUL, no bias ADD); y back to [1, 4, 3] before it.
// CHECK-LABEL: func.func @group_norm
// CHECK:         %[[X2:.*]] = tosa.reshape %{{.*}} : (tensor<1x4x3xi8>, !tosa.shape<2>) -> tensor<2x6xi8>
// CHECK-DAG:     %[[ZX:.*]] = "tosa.const"() <{values = dense<-3> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[X2]], %{{.*}}, %{{.*}}, %[[ZX]], {{.*}} -> tensor<2x6xi32>
// CHECK:         tosa.reduce_sum
// CHECK-DAG:     %[[A:.*]] = "tosa.const"() <{values = dense<1610612736> : tensor<1xi32>}>
// CHECK-DAG:     %[[S17:.*]] = "tosa.const"() <{values = dense<17> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[X2]], %[[A]], %[[S17]], {{.*}} -> tensor<2x6xi32>
// CHECK:         tosa.table
// CHECK:         %[[Y:.*]] = tosa.arithmetic_right_shift {{.*}} -> tensor<2x6xi32>
// CHECK:         %[[Y3:.*]] = tosa.reshape %[[Y]], %{{.*}} : (tensor<2x6xi32>, !tosa.shape<3>) -> tensor<1x4x3xi32>
// CHECK-NOT:     tosa.mul
// CHECK-NOT:     tosa.add
// CHECK:         tosa.rescale %[[Y3]], {{.*}} -> tensor<1x4x3xi8>
func.func @group_norm(%x: !torch.vtensor<[1,4,3],si8>) -> !torch.vtensor<[1,4,3],si8> {
  %sx = torch.constant.float 6.250000e-02
  %sy = torch.constant.float 3.125000e-02
  %z0 = torch.constant.int 0
  %zx = torch.constant.int -3
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %eps = torch.constant.float 1.000000e-05
  %int2 = torch.constant.int 2
  %w = torch.vtensor.literal(dense<5.000000e-01> : tensor<4xf32>) : !torch.vtensor<[4],f32>
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %sx, %zx, %lo, %hi, %i8, %none : !torch.vtensor<[1,4,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,4,3],f32>
  %y = torch.aten.group_norm %dx, %int2, %w, %none, %eps, %false : !torch.vtensor<[1,4,3],f32>, !torch.int, !torch.vtensor<[4],f32>, !torch.none, !torch.float, !torch.bool -> !torch.vtensor<[1,4,3],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %sy, %z0, %lo, %hi, %i8 : !torch.vtensor<[1,4,3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,4,3],si8>
  return %q : !torch.vtensor<[1,4,3],si8>
}

// -----

// COM: rms_norm of int16 values (a16w8): no centring (d = x 2^6: 65535 2^6 < 2^22), a 15-bit
// COM: mantissa (h = ceil((bits(W) - 15) / 2): SUB from 17) read by a 513-entry int16 TABLE whose
// COM: int32 result is r (no offset), and d r taken down 13 bits in the MUL (< 2^44 before it).
// CHECK-LABEL: func.func @rms_norm_int16
// CHECK-NOT:     tosa.reduce_sum
// CHECK:         %[[D:.*]] = tosa.rescale {{.*}} : (tensor<3x8xi16>, {{.*}}) -> tensor<3x8xi32>
// CHECK:         tosa.mul %[[D]], %[[D]]
// CHECK:         tosa.reduce_sum
// CHECK:         %[[W:.*]] = tosa.add
// CHECK:         %[[C17:.*]] = "tosa.const"() <{values = dense<17> : tensor<1x1xi32>}>
// CHECK:         %[[Z:.*]] = tosa.clz %[[W]]
// CHECK:         tosa.sub %[[C17]], %[[Z]]
// CHECK:         %[[INDEX:.*]] = tosa.rescale {{.*}} -> tensor<3x1xi16>
// CHECK:         %[[R:.*]] = tosa.table %[[INDEX]], %{{.*}} : (tensor<3x1xi16>, tensor<513xi16>) -> tensor<3x1xi32>
// CHECK:         %[[S13:.*]] = "tosa.const"() <{values = dense<13> : tensor<1xi8>}>
// CHECK:         tosa.mul %[[D]], %[[R]], %[[S13]]
// CHECK:         tosa.rescale {{.*}} -> tensor<3x8xi16>
func.func @rms_norm_int16(%x: !torch.vtensor<[3,8],si16>) -> !torch.vtensor<[3,8],si16> {
  %sx = torch.constant.float 1.220703125E-4
  %sy = torch.constant.float 1.220703125E-4
  %z0 = torch.constant.int 0
  %lo = torch.constant.int -32768
  %hi = torch.constant.int 32767
  %i16 = torch.constant.int 2
  %none = torch.constant.none
  %eps = torch.constant.float 1.000000e-06
  %int8 = torch.constant.int 8
  %shape = torch.prim.ListConstruct %int8 : (!torch.int) -> !torch.list<int>
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %sx, %z0, %lo, %hi, %i16, %none : !torch.vtensor<[3,8],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[3,8],f32>
  %y = torch.aten.rms_norm %dx, %shape, %none, %eps : !torch.vtensor<[3,8],f32>, !torch.list<int>, !torch.none, !torch.float -> !torch.vtensor<[3,8],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %sy, %z0, %lo, %hi, %i16 : !torch.vtensor<[3,8],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[3,8],si16>
  return %q : !torch.vtensor<[3,8],si16>
}

// -----

// COM: A float layer_norm (not between dequantize and quantize) is not this pass's.
// CHECK-LABEL: func.func @float_layer_norm
// CHECK:         torch.aten.layer_norm
// CHECK-NOT:     tosa.
func.func @float_layer_norm(%x: !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[2,4],f32> {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %eps = torch.constant.float 1.000000e-05
  %int4 = torch.constant.int 4
  %shape = torch.prim.ListConstruct %int4 : (!torch.int) -> !torch.list<int>
  %y = torch.aten.layer_norm %x, %shape, %none, %none, %eps, %false : !torch.vtensor<[2,4],f32>, !torch.list<int>, !torch.none, !torch.none, !torch.float, !torch.bool -> !torch.vtensor<[2,4],f32>
  return %y : !torch.vtensor<[2,4],f32>
}
