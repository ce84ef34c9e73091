// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file | filecheck %s

// COM: log_softmax over dim 1 of [1, 4, 3] as TosaQuantizer decomposes it (see
// COM: quantization/decompose_softmax.py), with scales that make the numbers easy to check
// COM: (the quantizer's own for S, l and y are (n + 1/2)/255, log(n)/255, s_x + log(n)/255): x (1/16,
// COM: zp 0); m = amax(x) shares them; d = x - m at x's scale with zp 127; e = exp(d) at
// COM: (1/255, -128); S = sum(e) at (1/32, -128); l = log(S) at (1/64, -128); y = d - l at
// COM: (1/16, 127).
// COM: * REDUCE_MAX on the int8 codes, over axis 1.
// COM: * x - m: both to int32 by 1/16 / (2 * 1/16 / 2^20) = 2^19 (multiplier 2^30, shift 11),
// COM:   back by 2^-19 (shift 49) to zp 127: exact, code = q_x - q_m + 127.
// COM: * the exp TABLE: entry i is input code i - 128, d = (i - 255) / 16: the last entry is
// COM:   exp(0) = 1 -> 0x7F (127), the one before exp(-1/16) * 255 - 128 = 111.6 -> 0x70,
// COM:   the first 156 (d <= -6.25 < log(1/510)) round to 0 -> 0x80 (-128).
// COM: * sum: e - (-128) to int32 (ratio 1: 2^30, shift 30), REDUCE_SUM over axis 1, then by
// COM:   (1/255) / (1/32) = 0.1255 (multiplier 1077952640, shift 33) to zp -128.
// COM: * the log TABLE: S = (i - 128 + 128) / 32; S <= 1 (i <= 32) -> log <= 0 -> 0x80, i = 33:
// COM:   log(33/32) * 64 = 1.97 -> -126 = 0x82, the last log(255/32) * 64 = 132.8 -> 5 = 0x05.
// COM: * d - l: d by 2^19 (shift 11, input zp 127), l by (1/64) / 2^-23 = 2^17 (shift 13, input
// COM:   zp -128), SUB, back by 2^-19 (shift 49) to zp 127.
// CHECK-LABEL: func.func @log_softmax
// CHECK-NOT:     torch.aten.amax
// CHECK:         %[[MAX:.*]] = tosa.reduce_max %[[X:.*]] {axis = 1 : i32} : (tensor<1x4x3xi8>) -> tensor<1x1x3xi8>
// COM: x and its max share one scale: x - max(x) is exact at that scale, every RESCALE of the
// COM: sub is by 1 (multiplier 2^30, shift 30), no headroom.
// CHECK-DAG:     %[[M30:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[S30:.*]] = "tosa.const"() <{values = dense<30> : tensor<1xi8>}>
// CHECK:         %[[X32:.*]] = tosa.rescale %{{.*}}, %[[M30]], %[[S30]], {{.*}} -> tensor<1x4x3xi32>
// CHECK-DAG:     %[[M30B:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[S30B:.*]] = "tosa.const"() <{values = dense<30> : tensor<1xi8>}>
// CHECK:         %[[MAX32:.*]] = tosa.rescale %{{.*}}, %[[M30B]], %[[S30B]], {{.*}} -> tensor<1x1x3xi32>
// CHECK:         %[[DIFF:.*]] = tosa.sub %[[X32]], %[[MAX32]] : (tensor<1x4x3xi32>, tensor<1x1x3xi32>) -> tensor<1x4x3xi32>
// CHECK-DAG:     %[[M30C:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[S30C:.*]] = "tosa.const"() <{values = dense<30> : tensor<1xi8>}>
// CHECK-DAG:     %[[Z127:.*]] = "tosa.const"() <{values = dense<127> : tensor<1xi8>}>
// CHECK:         %[[D:.*]] = tosa.rescale %[[DIFF]], %[[M30C]], %[[S30C]], %{{.*}}, %[[Z127]] {{.*}} -> tensor<1x4x3xi8>
// CHECK:         %[[EXP_TABLE:.*]] = "tosa.const"() <{values = dense<"0x80808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808081818181818181818181818181818181818282828282828282828383838383848484848585858686868787888889898A8B8B8C8D8E8E8F90919294959698999B9D9EA0A3A5A7AAACAFB2B5B9BDC0C5C9CED3D8DEE4EAF1F80008111B252F3B475361707F"> : tensor<256xi8>}>
// CHECK:         %[[E:.*]] = tosa.table %{{.*}}, %[[EXP_TABLE]] : (tensor<1x4x3xi8>, tensor<256xi8>) -> tensor<1x4x3xi8>
// CHECK-DAG:     %[[S30E:.*]] = "tosa.const"() <{values = dense<30> : tensor<1xi8>}>
// CHECK-DAG:     %[[ZM128:.*]] = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}>
// CHECK:         %[[E32:.*]] = tosa.rescale %{{.*}}, %{{.*}}, %[[S30E]], %[[ZM128]], {{.*}} -> tensor<1x4x3xi32>
// CHECK:         %[[SUM:.*]] = tosa.reduce_sum %[[E32]] {axis = 1 : i32} : (tensor<1x4x3xi32>) -> tensor<1x1x3xi32>
// CHECK-DAG:     %[[M_SUM:.*]] = "tosa.const"() <{values = dense<1077952640> : tensor<1xi32>}>
// CHECK-DAG:     %[[S33:.*]] = "tosa.const"() <{values = dense<33> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[SUM]], %[[M_SUM]], %[[S33]], {{.*}} -> tensor<1x1x3xi8>
// CHECK:         %[[LOG_TABLE:.*]] = "tosa.const"() <{values = dense<"0x80808080808080808080808080808080808080808080808080808080808080808082848688898B8D8E909193949697999A9B9D9E9FA0A1A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B7B8B9BABBBBBCBDBEBFBFC0C1C1C2C3C4C4C5C6C6C7C8C8C9CACACBCBCCCDCDCECECFD0D0D1D1D2D2D3D4D4D5D5D6D6D7D7D8D8D9D9DADADBDBDCDCDDDDDEDEDEDFDFE0E0E1E1E2E2E2E3E3E4E4E5E5E5E6E6E7E7E7E8E8E9E9E9EAEAEBEBEBECECECEDEDEDEEEEEFEFEFF0F0F0F1F1F1F2F2F2F3F3F3F4F4F4F5F5F5F6F6F6F7F7F7F7F8F8F8F9F9F9FAFAFAFBFBFBFBFCFCFCFDFDFDFDFEFEFEFFFFFFFF000000000101010102020203030303040404040505"> : tensor<256xi8>}>
// CHECK:         tosa.table %{{.*}}, %[[LOG_TABLE]] : (tensor<1x1x3xi8>, tensor<256xi8>) -> tensor<1x1x3xi8>
// CHECK-DAG:     %[[S11B:.*]] = "tosa.const"() <{values = dense<11> : tensor<1xi8>}>
// CHECK-DAG:     %[[Z127B:.*]] = "tosa.const"() <{values = dense<127> : tensor<1xi8>}>
// CHECK:         %[[D32:.*]] = tosa.rescale %{{.*}}, %{{.*}}, %[[S11B]], %[[Z127B]], {{.*}} -> tensor<1x4x3xi32>
// CHECK-DAG:     %[[S13:.*]] = "tosa.const"() <{values = dense<13> : tensor<1xi8>}>
// CHECK-DAG:     %[[ZM128B:.*]] = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}>
// CHECK:         %[[L32:.*]] = tosa.rescale %{{.*}}, %{{.*}}, %[[S13]], %[[ZM128B]], {{.*}} -> tensor<1x1x3xi32>
// CHECK:         %[[Y32:.*]] = tosa.sub %[[D32]], %[[L32]] : (tensor<1x4x3xi32>, tensor<1x1x3xi32>) -> tensor<1x4x3xi32>
// CHECK-DAG:     %[[S49B:.*]] = "tosa.const"() <{values = dense<49> : tensor<1xi8>}>
// CHECK-DAG:     %[[Z127C:.*]] = "tosa.const"() <{values = dense<127> : tensor<1xi8>}>
// CHECK:         %[[Y:.*]] = tosa.rescale %[[Y32]], %{{.*}}, %[[S49B]], %{{.*}}, %[[Z127C]] {{.*}} -> tensor<1x4x3xi8>
// CHECK-NOT:     torch.aten
// CHECK:         %[[OUT:.*]] = torch_c.from_builtin_tensor %[[Y]]
// CHECK:         return %[[OUT]]
func.func @log_softmax(%x: !torch.vtensor<[1,4,3],si8>) -> !torch.vtensor<[1,4,3],si8> {
  %s_x = torch.constant.float 6.250000e-02
  %s_e = torch.constant.float 0.003921568859368563
  %s_s = torch.constant.float 3.125000e-02
  %s_l = torch.constant.float 1.562500e-02
  %z_0 = torch.constant.int 0
  %z_127 = torch.constant.int 127
  %z_m128 = torch.constant.int -128
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %dx0 = torch.quantized_decomposed.dequantize_per_tensor %x, %s_x, %z_0, %lo, %hi, %i8, %none : !torch.vtensor<[1,4,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,4,3],f32>
  %dx1 = torch.quantized_decomposed.dequantize_per_tensor %x, %s_x, %z_0, %lo, %hi, %i8, %none : !torch.vtensor<[1,4,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,4,3],f32>
  %m = torch.aten.amax %dx0, %dims, %true : !torch.vtensor<[1,4,3],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,1,3],f32>
  %qm = torch.quantized_decomposed.quantize_per_tensor %m, %s_x, %z_0, %lo, %hi, %i8 : !torch.vtensor<[1,1,3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,3],si8>
  %dm = torch.quantized_decomposed.dequantize_per_tensor %qm, %s_x, %z_0, %lo, %hi, %i8, %none : !torch.vtensor<[1,1,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,3],f32>
  %d = torch.aten.sub.Tensor %dx1, %dm, %int1 : !torch.vtensor<[1,4,3],f32>, !torch.vtensor<[1,1,3],f32>, !torch.int -> !torch.vtensor<[1,4,3],f32>
  %qd = torch.quantized_decomposed.quantize_per_tensor %d, %s_x, %z_127, %lo, %hi, %i8 : !torch.vtensor<[1,4,3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,4,3],si8>
  %dd0 = torch.quantized_decomposed.dequantize_per_tensor %qd, %s_x, %z_127, %lo, %hi, %i8, %none : !torch.vtensor<[1,4,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,4,3],f32>
  %dd1 = torch.quantized_decomposed.dequantize_per_tensor %qd, %s_x, %z_127, %lo, %hi, %i8, %none : !torch.vtensor<[1,4,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,4,3],f32>
  %e = torch.aten.exp %dd0 : !torch.vtensor<[1,4,3],f32> -> !torch.vtensor<[1,4,3],f32>
  %qe = torch.quantized_decomposed.quantize_per_tensor %e, %s_e, %z_m128, %lo, %hi, %i8 : !torch.vtensor<[1,4,3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,4,3],si8>
  %de = torch.quantized_decomposed.dequantize_per_tensor %qe, %s_e, %z_m128, %lo, %hi, %i8, %none : !torch.vtensor<[1,4,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,4,3],f32>
  %s = torch.aten.sum.dim_IntList %de, %dims, %true, %none : !torch.vtensor<[1,4,3],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,1,3],f32>
  %qs = torch.quantized_decomposed.quantize_per_tensor %s, %s_s, %z_m128, %lo, %hi, %i8 : !torch.vtensor<[1,1,3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,3],si8>
  %ds = torch.quantized_decomposed.dequantize_per_tensor %qs, %s_s, %z_m128, %lo, %hi, %i8, %none : !torch.vtensor<[1,1,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,3],f32>
  %l = torch.aten.log %ds : !torch.vtensor<[1,1,3],f32> -> !torch.vtensor<[1,1,3],f32>
  %ql = torch.quantized_decomposed.quantize_per_tensor %l, %s_l, %z_m128, %lo, %hi, %i8 : !torch.vtensor<[1,1,3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,3],si8>
  %dl = torch.quantized_decomposed.dequantize_per_tensor %ql, %s_l, %z_m128, %lo, %hi, %i8, %none : !torch.vtensor<[1,1,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,3],f32>
  %y = torch.aten.sub.Tensor %dd1, %dl, %int1 : !torch.vtensor<[1,4,3],f32>, !torch.vtensor<[1,1,3],f32>, !torch.int -> !torch.vtensor<[1,4,3],f32>
  %qy = torch.quantized_decomposed.quantize_per_tensor %y, %s_x, %z_127, %lo, %hi, %i8 : !torch.vtensor<[1,4,3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,4,3],si8>
  return %qy : !torch.vtensor<[1,4,3],si8>
}

// -----

// COM: e * reciprocal(S) as a model may write it (reciprocal is a TABLE op; the quantizer's own
// COM: softmax is exp(log_softmax)): the reciprocal TABLE maps S = (i - 128 + 128) / 32 to
// COM: 1/S at (1/255, -128): S <= 1 (the first 33 entries, S = 0 included) -> 0x7F (127), the
// COM: last 1 / (255/32) * 255 - 128 = -96 -> 0xA0. The MUL of (e + 128) and (r + 128) in int32
// COM: goes back by (1/255)^2 / (1/255) = 1/255 (multiplier 1077952640, shift 38) to zp -128.
// CHECK-LABEL: func.func @softmax_reciprocal_mul
// CHECK:         %[[TABLE:.*]] = "tosa.const"() <{values = dense<"0x7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F777069635D57514C47423E3935312E2A2723201D1A1714120F0D0A08060402FFFEFCFAF8F6F5F3F1F0EEEDEBEAE9E7E6E5E4E2E1E0DFDEDDDCDBDAD9D8D7D6D5D4D3D2D2D1D0CFCECECDCCCCCBCACAC9C8C8C7C6C6C5C5C4C3C3C2C2C1C1C0C0BFBFBEBEBDBDBCBCBCBBBBBABAB9B9B9B8B8B8B7B7B6B6B6B5B5B5B4B4B4B3B3B3B2B2B2B1B1B1B1B0B0B0AFAFAFAFAEAEAEAEADADADADACACACACABABABABAAAAAAAAAAA9A9A9A9A9A8A8A8A8A8A7A7A7A7A7A6A6A6A6A6A6A5A5A5A5A5A5A4A4A4A4A4A4A3A3A3A3A3A3A3A2A2A2A2A2A2A2A1A1A1A1A1A1A1A1A0A0A0A0"> : tensor<256xi8>}>
// CHECK:         %[[R:.*]] = tosa.table %{{.*}}, %[[TABLE]] : (tensor<1x1x3xi8>, tensor<256xi8>) -> tensor<1x1x3xi8>
// CHECK:         %[[E32:.*]] = tosa.rescale %{{.*}} -> tensor<1x4x3xi32>
// CHECK:         %[[R32:.*]] = tosa.rescale %{{.*}} -> tensor<1x1x3xi32>
// CHECK:         %[[P:.*]] = tosa.mul %[[E32]], %[[R32]], %{{.*}} : (tensor<1x4x3xi32>, tensor<1x1x3xi32>, tensor<1xi8>) -> tensor<1x4x3xi32>
// CHECK-DAG:     %[[M:.*]] = "tosa.const"() <{values = dense<1077952640> : tensor<1xi32>}>
// CHECK-DAG:     %[[S38:.*]] = "tosa.const"() <{values = dense<38> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[P]], %[[M]], %[[S38]], {{.*}} -> tensor<1x4x3xi8>
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @softmax_reciprocal_mul(%e: !torch.vtensor<[1,4,3],si8>, %s: !torch.vtensor<[1,1,3],si8>) -> !torch.vtensor<[1,4,3],si8> {
  %s_e = torch.constant.float 0.003921568859368563
  %s_s = torch.constant.float 3.125000e-02
  %z = torch.constant.int -128
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %ds = torch.quantized_decomposed.dequantize_per_tensor %s, %s_s, %z, %lo, %hi, %i8, %none : !torch.vtensor<[1,1,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,3],f32>
  %r = torch.aten.reciprocal %ds : !torch.vtensor<[1,1,3],f32> -> !torch.vtensor<[1,1,3],f32>
  %qr = torch.quantized_decomposed.quantize_per_tensor %r, %s_e, %z, %lo, %hi, %i8 : !torch.vtensor<[1,1,3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,3],si8>
  %dr = torch.quantized_decomposed.dequantize_per_tensor %qr, %s_e, %z, %lo, %hi, %i8, %none : !torch.vtensor<[1,1,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,3],f32>
  %de = torch.quantized_decomposed.dequantize_per_tensor %e, %s_e, %z, %lo, %hi, %i8, %none : !torch.vtensor<[1,4,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,4,3],f32>
  %y = torch.aten.mul.Tensor %de, %dr : !torch.vtensor<[1,4,3],f32>, !torch.vtensor<[1,1,3],f32> -> !torch.vtensor<[1,4,3],f32>
  %qy = torch.quantized_decomposed.quantize_per_tensor %y, %s_e, %z, %lo, %hi, %i8 : !torch.vtensor<[1,4,3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,4,3],si8>
  return %qy : !torch.vtensor<[1,4,3],si8>
}

// -----

// COM: amax without keepdim over the last dim: REDUCE_MAX on the codes, then a reshape; the
// COM: output shares the input's parameters, so no RESCALE.
// CHECK-LABEL: func.func @amax_without_keepdim
// CHECK:         %[[MAX:.*]] = tosa.reduce_max %{{.*}} {axis = 1 : i32} : (tensor<2x5xi8>) -> tensor<2x1xi8>
// CHECK-NOT:     tosa.rescale
// CHECK:         %[[Y:.*]] = tosa.reshape %[[MAX]], %{{.*}} -> tensor<2xi8>
// CHECK:         torch_c.from_builtin_tensor %[[Y]]

func.func @amax_without_keepdim(%x: !torch.vtensor<[2,5],si8>) -> !torch.vtensor<[2],si8> {
  %scale = torch.constant.float 5.000000e-01
  %z = torch.constant.int 3
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int-1 = torch.constant.int -1
  %dims = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %scale, %z, %lo, %hi, %i8, %none : !torch.vtensor<[2,5],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,5],f32>
  %m = torch.aten.amax %dx, %dims, %false : !torch.vtensor<[2,5],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2],f32>
  %qm = torch.quantized_decomposed.quantize_per_tensor %m, %scale, %z, %lo, %hi, %i8 : !torch.vtensor<[2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2],si8>
  return %qm : !torch.vtensor<[2],si8>
}
