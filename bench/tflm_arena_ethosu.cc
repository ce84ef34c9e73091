// A host stand-in for TensorFlow Lite Micro's Ethos-U kernel, for bench/tflm_arena.py.
//
// The host build of TFLite Micro (the `tflite-micro` PyPI wheel) has no Ethos-U kernel:
// Register_ETHOSU() gives nothing and a Vela .tflite fails with "Failed to get registration
// from op code CUSTOM". This file registers a custom "ethos-u" operator whose Init and Prepare
// make exactly the arena requests of tensorflow/lite/micro/kernels/ethos_u/ethosu.cc:
//   Init:    AllocatePersistentBuffer(sizeof(OpData))           (OpData: three ints)
//   Prepare: RequestScratchBufferInArena(n * sizeof(uint64_t))   the NPU base addresses
//            RequestScratchBufferInArena(n * sizeof(size_t))     their sizes
//            AllocateTempInputTensor(node, 0) / DeallocateTempTfLiteTensor (the command
//            stream's size), n = the node's inputs + outputs.
// Its Invoke fails: no NPU runs here; only AllocateTensors() is measured.
//
// The wheel's ABI is declared here, not included: the wheel (TFLite Micro 0.dev20261023182759,
// commit 8f6596d) is newer than any TFLM source fetched here, and moved the C types into
// tflite::micro with a TfLiteContext that holds only impl_ (its micro_common.h of 2026). Each
// declaration was checked against the wheel's _runtime.so: the exported functions by their
// mangled names (an unresolved one fails the load), the MicroContext virtual order against
// its vtable for MicroInterpreterContext, the registration table (at offset 8, 56 bytes a
// TFLMRegistration, the count at 8 + 200 x 56) against its FindOp(const char*); and the
// registerer checks the table at run time through that FindOp before it reports success.
// Loaded by ctypes with RTLD_GLOBAL after the wheel's _runtime.so; the wheel finds
// `torch2tosa_register_ethosu` with dlsym (its `custom_op_registerers`).

#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace tflite {
namespace micro {

typedef enum TfLiteStatus { kTfLiteOk = 0, kTfLiteError = 1 } TfLiteStatus;

struct TfLiteIntArray {
  int size;
  int data[];
};

struct TfLiteTensor;  // only its `bytes` is read, through the offset below

struct TfLiteNode {
  TfLiteIntArray* inputs;
  TfLiteIntArray* outputs;
  TfLiteIntArray* intermediates;
  void* user_data;
  void* builtin_data;
  const void* custom_initial_data;
  int custom_initial_data_size;
};

struct TfLiteContext {
  void* impl_;
};

struct TFLMRegistration {
  void* (*init)(TfLiteContext* context, const char* buffer, size_t length);
  void (*free)(TfLiteContext* context, void* buffer);
  TfLiteStatus (*prepare)(TfLiteContext* context, TfLiteNode* node);
  TfLiteStatus (*invoke)(TfLiteContext* context, TfLiteNode* node);
  void (*reset)(TfLiteContext* context, void* buffer);
  int32_t builtin_code;
  const char* custom_name;
};

// The wheel's exported functions (what TfLiteContext's methods call).
void* MicroContextAllocatePersistentBuffer(TfLiteContext* ctx, size_t bytes);
TfLiteStatus MicroContextRequestScratchBufferInArena(TfLiteContext* ctx, size_t bytes,
                                                     int* buffer_idx);

class MicroContext {
 public:
  // The first virtual slots, in the wheel's order (its vtable for MicroInterpreterContext).
  virtual ~MicroContext();
  virtual void* AllocatePersistentBuffer(size_t bytes) = 0;
  virtual TfLiteStatus RequestScratchBufferInArena(size_t bytes, int* buffer_idx) = 0;
  virtual void* GetScratchBuffer(int buffer_idx) = 0;
  virtual TfLiteTensor* AllocateTempTfLiteTensor(int tensor_idx) = 0;
  virtual void DeallocateTempTfLiteTensor(TfLiteTensor* tensor) = 0;
  TfLiteTensor* AllocateTempInputTensor(const TfLiteNode* node, int index);  // exported
};

template <unsigned int N>
class MicroMutableOpResolver {
 public:
  const TFLMRegistration* FindOp(const char* op) const;  // exported for N = 200
};

}  // namespace micro
}  // namespace tflite

using namespace tflite::micro;

namespace {

constexpr unsigned kOpCount = 200;                 // PythonOpsResolver: MicroMutableOpResolver<200>
constexpr size_t kRegistrations = sizeof(void*);   // registrations_[200] after the vtable pointer
constexpr size_t kRegistrationsLen = kRegistrations + kOpCount * sizeof(TFLMRegistration);
constexpr size_t kTensorBytes = 40;                // TfLiteTensor::bytes
constexpr int32_t kBuiltinCustom = 32;             // BuiltinOperator_CUSTOM

struct OpData {  // ethosu.cc's
  int cms_data_size;
  int base_addr_idx;
  int base_addr_size_idx;
};

void* Init(TfLiteContext* context, const char*, size_t) {
  return MicroContextAllocatePersistentBuffer(context, sizeof(OpData));
}

TfLiteStatus Prepare(TfLiteContext* context, TfLiteNode* node) {
  if (node->inputs->size <= 0 || node->user_data == nullptr ||
      node->custom_initial_data_size <= 0)
    return kTfLiteError;
  OpData* data = static_cast<OpData*>(node->user_data);
  int num_base_addr = node->inputs->size + node->outputs->size;
  if (MicroContextRequestScratchBufferInArena(context, num_base_addr * sizeof(uint64_t),
                                              &data->base_addr_idx) != kTfLiteOk ||
      MicroContextRequestScratchBufferInArena(context, num_base_addr * sizeof(size_t),
                                              &data->base_addr_size_idx) != kTfLiteOk)
    return kTfLiteError;
  MicroContext* micro_context = static_cast<MicroContext*>(context->impl_);
  TfLiteTensor* tensor = micro_context->AllocateTempInputTensor(node, 0);
  if (tensor == nullptr) return kTfLiteError;
  data->cms_data_size = static_cast<int>(
      *reinterpret_cast<size_t*>(reinterpret_cast<char*>(tensor) + kTensorBytes));
  micro_context->DeallocateTempTfLiteTensor(tensor);
  return data->cms_data_size > 0 ? kTfLiteOk : kTfLiteError;
}

TfLiteStatus Invoke(TfLiteContext*, TfLiteNode*) {
  std::fprintf(stderr, "torch2tosa ethos-u stand-in: no NPU on the host\n");
  return kTfLiteError;
}

TFLMRegistration registration = {Init, nullptr, Prepare, Invoke, nullptr, kBuiltinCustom,
                                 "ethos-u"};

}  // namespace

extern "C" bool torch2tosa_register_ethosu(void* python_ops_resolver) {
  auto* resolver = static_cast<MicroMutableOpResolver<kOpCount>*>(python_ops_resolver);
  if (resolver->FindOp("ethos-u") != nullptr) return false;
  char* base = static_cast<char*>(python_ops_resolver);
  auto* len = reinterpret_cast<unsigned int*>(base + kRegistrationsLen);
  if (*len == 0 || *len >= kOpCount) return false;  // not the table this file expects
  auto* table = reinterpret_cast<TFLMRegistration*>(base + kRegistrations);
  table[*len] = registration;
  *len += 1;
  // The wheel's own lookup must now find this very entry: the layout check.
  return resolver->FindOp("ethos-u") == &table[*len - 1];
}
