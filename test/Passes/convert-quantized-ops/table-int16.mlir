// RUN: torch2tosa-opt %s --convert-quantized-ops=target=ethos-u85-256 --split-input-file | filecheck %s
// RUN: not torch2tosa-opt %s --convert-quantized-ops=target=ethos-u55-128 --split-input-file 2>&1 | filecheck %s --check-prefix=U55

// COM: int16 sigmoid (a16w8), input scale 2^-12 (codes cover [-8, 8)), output scale 2^-15:
// COM: a 513-entry int16 TABLE at the output's scale, entry i = sigmoid((128 i - 32768) 2^-12)
// COM: / 2^-15: [0..2] = 11, 11, 12 (sigmoid(-8) / 2^-15 = 10.99), [255..257] = 16128,
// COM: 16384 (sigmoid(0)), 16640, [510..512] = 32756, 32757, 32757 (sigmoid(8) / 2^-15 =
// COM: 32757.0); little-endian hex below (0x4000 is "0040"). Its
// COM: int32 result has 7 more fractional bits: RESCALE by 2^-7 exactly (multiplier 2^30,
// COM: shift 37) to int16, zero points 0.

// CHECK-LABEL: func.func @sigmoid_i16
// CHECK:         %[[T:.*]] = "tosa.const"() <{values = dense<"0x0B000B000C00{{[0-9A-F]+}}003F00400041{{[0-9A-F]+}}F47FF57FF57F"> : tensor<513xi16>}>
// CHECK:         %[[R:.*]] = tosa.table %{{.*}}, %[[T]] : (tensor<4xi16>, tensor<513xi16>) -> tensor<4xi32>
// CHECK-DAG:     %[[M:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[S:.*]] = "tosa.const"() <{values = dense<37> : tensor<1xi8>}>
// CHECK-DAG:     %[[IZP:.*]] = "tosa.const"() <{values = dense<0> : tensor<1xi32>}>
// CHECK-DAG:     %[[OZP:.*]] = "tosa.const"() <{values = dense<0> : tensor<1xi16>}>
// CHECK:         tosa.rescale %[[R]], %[[M]], %[[S]], %[[IZP]], %[[OZP]] {{.*}}scale32 = true{{.*}} : (tensor<4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi16>) -> tensor<4xi16>
// CHECK-NOT:     torch.aten.sigmoid
// CHECK:         return
// U55: error: aten.sigmoid: int16 activations (scheme 'a16w8') need an int16 TABLE lookup (513 entries), which target 'ethos-u55-128' does not run ({{.*}}; its TABLE is int8 only): quantize with scheme='a8w8' for this target, or compile the a16w8 model for ethos-u85-256 or tosa-int
func.func @sigmoid_i16(%x: !torch.vtensor<[4],si16>) -> !torch.vtensor<[4],si16> {
  %in = torch.constant.float 2.44140625E-4
  %out = torch.constant.float 3.0517578125E-5
  %z0 = torch.constant.int 0
  %lo = torch.constant.int -32768
  %hi = torch.constant.int 32767
  %i16 = torch.constant.int 2
  %none = torch.constant.none
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %in, %z0, %lo, %hi, %i16, %none : !torch.vtensor<[4],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %y = torch.aten.sigmoid %dx : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %out, %z0, %lo, %hi, %i16 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si16>
  return %q : !torch.vtensor<[4],si16>
}

// -----

// COM: an int8 sigmoid on the same target keeps its 256-entry int8 TABLE and no RESCALE
// COM: (the int16 form must not fire), and is no error on ethos-u55-128 either.

// CHECK-LABEL: func.func @sigmoid_i8
// CHECK-NOT:     tosa.rescale
// CHECK:         tosa.table %{{.*}}, %{{.*}} : (tensor<4xi8>, tensor<256xi8>) -> tensor<4xi8>
// CHECK:         return
// U55-NOT: error: aten.sigmoid: int16
func.func @sigmoid_i8(%x: !torch.vtensor<[4],si8>) -> !torch.vtensor<[4],si8> {
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

// COM: int16 exp, input and output scale 2^-12: exp passes the output's top (32767 steps, 8.0)
// COM: at x = log 8 inside the table's domain [-8, 8). The segment crossing it rises G = 1036
// COM: steps, so the table's scale is t = 2^-12 (32767 + G) / 32767 (f clipped at 32767 + G
// COM: steps): no in-range segment interpolates toward a saturated entry. Entries [255..257]
// COM: = exp(-1/32, 0, 1/32) / t = 3850, 3972, 4098; the last ones saturate at 32767. RESCALE
// COM: t / (2^7 2^-12) = 1.0312 * 2^-7: multiplier 1107254496, shift 37.

// CHECK-LABEL: func.func @exp_i16_past_output_range
// CHECK:         %[[T:.*]] = "tosa.const"() <{values = dense<"0x010001000100{{[0-9A-F]+}}0A0F840F0210{{[0-9A-F]+}}FF7FFF7FFF7F"> : tensor<513xi16>}>
// CHECK:         %[[R:.*]] = tosa.table %{{.*}}, %[[T]] : (tensor<4xi16>, tensor<513xi16>) -> tensor<4xi32>
// CHECK-DAG:     %[[M:.*]] = "tosa.const"() <{values = dense<1107254496> : tensor<1xi32>}>
// CHECK-DAG:     %[[S:.*]] = "tosa.const"() <{values = dense<37> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[R]], %[[M]], %[[S]]
// CHECK:         return
func.func @exp_i16_past_output_range(%x: !torch.vtensor<[4],si16>) -> !torch.vtensor<[4],si16> {
  %s = torch.constant.float 2.44140625E-4
  %z0 = torch.constant.int 0
  %lo = torch.constant.int -32768
  %hi = torch.constant.int 32767
  %i16 = torch.constant.int 2
  %none = torch.constant.none
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z0, %lo, %hi, %i16, %none : !torch.vtensor<[4],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %y = torch.aten.exp %dx : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %s, %z0, %lo, %hi, %i16 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si16>
  return %q : !torch.vtensor<[4],si16>
}
