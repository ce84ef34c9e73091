// RUN: torch2tosa-opt %s --decompose-gru=target=ethos-u85-256 --canonicalize --split-input-file | filecheck %s
// RUN: torch2tosa-opt %s --decompose-gru=target=ethos-u55-128 --canonicalize --split-input-file | filecheck %s --check-prefix=U55

// COM: An a8w8 GRU (input 2, hidden 32: products 96 wide, 2 steps, zero h0; quantized.mlir's
// COM: scales) for a target whose state product is "weights_matmul" from 96 channels
// COM: (Target.state_product, weights_matmul_min_width: ethos-u85-256): step 1's h W_hh^T is a
// COM: MATMUL with the constant weights [1, 96, 32] first and h [1, 1, 32] reshaped to
// COM: [1, 32, 1] second; its [1, 96, 1] result reshaped to [1, 1, 96] and RESCALEd
// COM: (2^-7 2^-7 / S = 4, shift 28); b_hn added after the RESCALE, at S = 2^-16:
// COM: 0.25 / 2^-16 = 16384. No conv2d but the input projection. On ethos-u55-128 the same
// COM: GRU keeps its 1x1 CONV2D (b_hn in its accumulator: 0.25 / 2^-14 = 4096), no MATMUL.
// COM: For the weights-first MATMUL the products carry zbar's own (negated z) rows, G = 4
// COM: (gru_formats.zbar_weights_for): 128 wide, 1 - z read from the one sigmoid TABLE, two
// COM: TABLEs a step; on ethos-u55-128 96 wide, G = 3.
// CHECK-LABEL: func.func @gru_a8w8_h32
// COM: W_hh is all ones: rows r, z, n 1 (0x01), zbar's rows -1 (0xFF)
// CHECK-DAG:     %[[WT:.*]] = "tosa.const"() <{values = dense<"0x0101{{[0-9A-F]*}}0101FFFF{{[0-9A-F]*}}FFFF"> : tensor<1x128x32xi8>}>
// CHECK-DAG:     %[[BHN:.*]] = "tosa.const"() <{values = dense<"0x{{[0-9A-F]*}}"> : tensor<1x1x128xi32>}>
// CHECK-DAG:     %[[R28:.*]] = "tosa.const"() <{values = dense<28> : tensor<1xi8>}>
// CHECK:         tosa.conv2d {{.*}} -> tensor<1x1x2x128xi32>
// CHECK-NOT:     tosa.conv2d
// CHECK:         %[[HT:.*]] = tosa.reshape {{.*}} -> tensor<1x32x1xi8>
// CHECK:         %[[ACC:.*]] = tosa.matmul %[[WT]], %[[HT]], {{.*}} : (tensor<1x128x32xi8>, tensor<1x32x1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x128x1xi32>
// CHECK:         %[[ACC128:.*]] = tosa.reshape %[[ACC]], {{.*}} -> tensor<1x1x128xi32>
// CHECK:         %[[GH:.*]] = tosa.rescale %[[ACC128]], {{.*}}, %[[R28]], {{.*}} -> tensor<1x1x128xi32>
// CHECK:         tosa.add %[[GH]], %[[BHN]] : (tensor<1x1x128xi32>, tensor<1x1x128xi32>) -> tensor<1x1x128xi32>
// CHECK-NOT:     tosa.sub
// CHECK-COUNT-2: tosa.table
// CHECK-NOT:     tosa.table
// CHECK-NOT:     tosa.conv2d
// CHECK-NOT:     tosa.matmul
// CHECK:         return

// U55-LABEL: func.func @gru_a8w8_h32
// U55-NOT:     tosa.matmul
// U55:         tosa.conv2d {{.*}} -> tensor<1x1x2x96xi32>
// U55:         tosa.conv2d {{.*}} -> tensor<1x1x1x96xi32>
// U55-NOT:     tosa.matmul
// U55:         return
func.func @gru_a8w8_h32(%arg0: !torch.vtensor<[1,2,2],si8>) -> (!torch.vtensor<[1,2,32],si8>, !torch.vtensor<[1,1,32],si8>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int32 = torch.constant.int 32
  %int3 = torch.constant.int 3
  %int-127 = torch.constant.int -127
  %int127 = torch.constant.int 127
  %int-128 = torch.constant.int -128
  %none = torch.constant.none
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %float0 = torch.constant.float 0.000000e+00
  %sx = torch.constant.float 3.125000e-02
  %sh = torch.constant.float 7.812500e-03
  %x = torch.quantized_decomposed.dequantize_per_tensor %arg0, %sx, %int3, %int-128, %int127, %int1, %none : !torch.vtensor<[1,2,2],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,2],f32>
  %wq = torch.vtensor.literal(dense<1> : tensor<96x2xi8>) : !torch.vtensor<[96,2],si8>
  %vq = torch.vtensor.literal(dense<1> : tensor<96x32xi8>) : !torch.vtensor<[96,32],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<96xf32>) : !torch.vtensor<[96],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<96xi64>) : !torch.vtensor<[96],si64>
  %w_ih = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[96,2],si8>, !torch.vtensor<[96],f32>, !torch.vtensor<[96],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[96,2],f32>
  %w_hh = torch.quantized_decomposed.dequantize_per_channel %vq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[96,32],si8>, !torch.vtensor<[96],f32>, !torch.vtensor<[96],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[96,32],f32>
  %b = torch.vtensor.literal(dense<2.500000e-01> : tensor<96xf32>) : !torch.vtensor<[96],f32>
  %shape = torch.prim.ListConstruct %int1, %int1, %int32 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %h0 = torch.aten.zeros %shape, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[1,1,32],f32>
  %params = torch.prim.ListConstruct %w_ih, %w_hh, %b, %b : (!torch.vtensor<[96,2],f32>, !torch.vtensor<[96,32],f32>, !torch.vtensor<[96],f32>, !torch.vtensor<[96],f32>) -> !torch.list<vtensor>
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h0, %params, %true, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,32],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,2,32],f32>, !torch.vtensor<[1,1,32],f32>)
  %q0 = torch.quantized_decomposed.quantize_per_tensor %0#0, %sh, %int0, %int-128, %int127, %int1 : !torch.vtensor<[1,2,32],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,32],si8>
  %q1 = torch.quantized_decomposed.quantize_per_tensor %0#1, %sh, %int0, %int-128, %int127, %int1 : !torch.vtensor<[1,1,32],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,32],si8>
  return %q0, %q1 : !torch.vtensor<[1,2,32],si8>, !torch.vtensor<[1,1,32],si8>
}

// -----

// COM: quantized.mlir's GRU (hidden 2: products 6 wide, below ethos-u85-256's 96): the CONV2D,
// COM: b_hn in its accumulator (0.25 / 2^-14 = 4096), on either target (ethos-u85-256: G = 4,
// COM: zbar's rows with no b_hn).
// CHECK-LABEL: func.func @gru_a8w8
// CHECK-DAG:     %[[BHN:.*]] = "tosa.const"() <{values = dense<[0, 0, 0, 0, 4096, 4096, 0, 0]> : tensor<8xi32>}>
// CHECK-NOT:     tosa.matmul
// CHECK:         tosa.conv2d {{.*}} -> tensor<1x1x2x8xi32>
// CHECK:         tosa.conv2d {{.*}}, %[[BHN]], {{.*}} -> tensor<1x1x1x8xi32>
// CHECK-NOT:     tosa.matmul
// CHECK:         return
// U55-LABEL: func.func @gru_a8w8
// U55-NOT:     tosa.matmul
// U55:         tosa.conv2d
// U55:         tosa.conv2d
// U55-NOT:     tosa.matmul
// U55:         return
func.func @gru_a8w8(%arg0: !torch.vtensor<[1,2,2],si8>) -> (!torch.vtensor<[1,2,2],si8>, !torch.vtensor<[1,1,2],si8>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int-127 = torch.constant.int -127
  %int127 = torch.constant.int 127
  %int-128 = torch.constant.int -128
  %none = torch.constant.none
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %float0 = torch.constant.float 0.000000e+00
  %sx = torch.constant.float 3.125000e-02
  %sh = torch.constant.float 7.812500e-03
  %x = torch.quantized_decomposed.dequantize_per_tensor %arg0, %sx, %int3, %int-128, %int127, %int1, %none : !torch.vtensor<[1,2,2],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,2],f32>
  %wq = torch.vtensor.literal(dense<[[127, -64], [127, -64], [127, -64], [127, -64], [127, -64], [127, -64]]> : tensor<6x2xi8>) : !torch.vtensor<[6,2],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<6xi64>) : !torch.vtensor<[6],si64>
  %w_ih = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[6,2],si8>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[6,2],f32>
  %w_hh = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[6,2],si8>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[6,2],f32>
  %b = torch.vtensor.literal(dense<2.500000e-01> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %shape = torch.prim.ListConstruct %int1, %int1, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %h0 = torch.aten.zeros %shape, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %params = torch.prim.ListConstruct %w_ih, %w_hh, %b, %b : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>) -> !torch.list<vtensor>
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h0, %params, %true, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>)
  %q0 = torch.quantized_decomposed.quantize_per_tensor %0#0, %sh, %int0, %int-128, %int127, %int1 : !torch.vtensor<[1,2,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,2],si8>
  %q1 = torch.quantized_decomposed.quantize_per_tensor %0#1, %sh, %int0, %int-128, %int127, %int1 : !torch.vtensor<[1,1,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,2],si8>
  return %q0, %q1 : !torch.vtensor<[1,2,2],si8>, !torch.vtensor<[1,1,2],si8>
}

