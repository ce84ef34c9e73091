// RUN: torch2tosa-opt %s --fold-batch-norm --split-input-file --verify-diagnostics

// COM: Batch-norm statistics that are not constants cannot be folded: a diagnostic, not a crash.
func.func @mean_not_constant(%arg0: !torch.vtensor<[1,2,4],f32>, %mean: !torch.vtensor<[2],f32>, %var: !torch.vtensor<[2],f32>) -> !torch.vtensor<[1,2,4],f32> {
  %none = torch.constant.none
  %float = torch.constant.float 1.000000e-01
  // expected-error @below {{aten._native_batch_norm_legit_no_training: running_mean must be a compile-time constant (fold-batch-norm folds inference batch norm only)}}
  %1:3 = torch.operator "torch.aten._native_batch_norm_legit_no_training"(%arg0, %none, %none, %mean, %var, %float, %float) : (!torch.vtensor<[1,2,4],f32>, !torch.none, !torch.none, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.float, !torch.float) -> (!torch.vtensor<[1,2,4],f32>, !torch.vtensor<[0],f32>, !torch.vtensor<[0],f32>)
  return %1#0 : !torch.vtensor<[1,2,4],f32>
}

// -----

func.func @dynamic_input(%arg0: !torch.vtensor<[1,2,?],f32>) -> !torch.vtensor<[1,2,?],f32> {
  %none = torch.constant.none
  %float = torch.constant.float 1.000000e-01
  %stats = torch.vtensor.literal(dense<1.0> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  // expected-error @below {{aten._native_batch_norm_legit_no_training: the input must have a static shape and a float element type, got !torch.vtensor<[1,2,?],f32>}}
  %1:3 = torch.operator "torch.aten._native_batch_norm_legit_no_training"(%arg0, %none, %none, %stats, %stats, %float, %float) : (!torch.vtensor<[1,2,?],f32>, !torch.none, !torch.none, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.float, !torch.float) -> (!torch.vtensor<[1,2,?],f32>, !torch.vtensor<[0],f32>, !torch.vtensor<[0],f32>)
  return %1#0 : !torch.vtensor<[1,2,?],f32>
}
