// Where a network's layers compute and its flat buffers live: a property of the network,
// not calls into kernels/cpu scattered through the engine. Models ask a device for each
// layer by kind (models.cpp) and for their buffers and loss head (network.cpp). The CPU
// device builds the layers of engine/model/layers.h over kernels/cpu and keeps the buffers
// in host memory; a CUDA device (the GPU issue) builds its own layers over cuBLAS and its
// kernels, and keeps the buffers in device memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/device_timer.h"
#include "engine/model/layer.h"
#include "engine/model/loss_head.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/mixed_gemm.h"
#include "kernels/cpu/optimizer_update.h"
#include "kernels/cpu/qsgd_quantize.h"

namespace ranklab {

enum class LayerKind { kLinear, kConv2d, kMaxPool2d, kReLU, kDropout, kFlatten };

// One layer a model wants, whatever computes it.
struct LayerRequest {
  LayerKind kind = LayerKind::kLinear;
  std::string name;  // "fc0", "conv1"
  Shape input;
  int outputs = 0;    // Linear: features; Conv2d: channels
  int kernel = 0;     // Conv2d: square kernel side
  float dropout = 0;  // Dropout: probability
  // Linear: false for a row-parallel slice other than the first (tensor parallelism): it
  // holds and learns the bias but adds none, so the slices' sum has it once.
  bool adds_bias = true;
};

// A run of floats in a device's memory, zeroed when made.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual float* data() = 0;
  virtual size_t size() const = 0;
};

// The memory-level operations the engine needs besides layers: moving values between host
// and device, and the optimizer's and the loss scaler's loops over the flat buffers, so
// those buffers never have to visit the host during a step. Pointers named `host` are host
// memory; every other pointer is this device's (from allocate() or a layer's buffers).
// Work may be queued: a download, unscale() and synchronize() return once it is done.
class ComputeDevice {
 public:
  virtual ~ComputeDevice() = default;
  virtual std::string name() const = 0;  // "cpu", "cuda:0"
  virtual std::unique_ptr<Layer> makeLayer(const LayerRequest& request) const = 0;
  virtual std::unique_ptr<LossHead> makeLossHead() const = 0;
  virtual std::unique_ptr<DeviceBuffer> allocate(size_t floats) const = 0;

  // True when its buffers are host memory that code outside the device may read and write.
  virtual bool hostMemory() const = 0;
  virtual void upload(float* to, const float* host, size_t n) const = 0;
  // upload(), queued: `host` must stay unchanged until the next download() or synchronize()
  // (truly asynchronous only from memory pinHost() locked).
  virtual void uploadAsync(float* to, const float* host, size_t n) const { upload(to, host, n); }
  // Page-locks `bytes` of host memory at `host` while the result lives, so copies from it
  // run without a bounce buffer and without blocking the host; null where the device needs
  // none (the CPU). Throws std::runtime_error naming why it could not.
  virtual std::shared_ptr<void> pinHost(void* /*host*/, size_t /*bytes*/) const { return nullptr; }
  virtual void download(float* host, const float* from, size_t n) const = 0;
  virtual void copy(float* to, const float* from, size_t n) const = 0;
  virtual void fill(float* to, size_t n, float value) const = 0;
  // kernels/cpu/optimizer_update.h's updates, bit for bit where the device allows.
  virtual void sgdUpdate(float* params, const float* grads, float* velocity, size_t n, float lr,
                         float momentum, float weight_decay, bool nesterov) const = 0;
  virtual void adamUpdate(float* params, const float* grads, float* first_moment,
                          float* second_moment, size_t n, const kernels::AdamScalars& s) const = 0;
  // grads *= factor; false when any of them is then inf or NaN (AMP's unscale).
  virtual bool scaleAndCheckFinite(float* grads, size_t n, float factor) const = 0;
  // The codecs' encode where the gradient is (engine/train/device_codec_sync.h), so their
  // payload crosses to the host instead of n floats: to += from
  // (error feedback's residual added); velocity = momentum * velocity + grads, then grads =
  // velocity (DGC's momentum correction); to[host_indices[j]] = host_values[j] for j < k,
  // `to` being n floats (an index not below n throws std::out_of_range, nothing written);
  // the selections of kernels/cpu/sparse_select.h (topk's k, threshold's |x| >=
  // threshold), their indices and values replacing the host vectors' contents; and
  // host_values[j] = x[host_indices[j]] for j < k (randomk's pick).
  virtual void add(float* to, const float* from, size_t n) const = 0;
  virtual void accumulateMomentum(float* velocity, float* grads, size_t n,
                                  float momentum) const = 0;
  virtual void scatter(float* to, size_t n, const uint32_t* host_indices, const float* host_values,
                       size_t k) const = 0;
  virtual void selectTopk(const float* x, size_t n, size_t k, std::vector<uint32_t>& host_indices,
                          std::vector<float>& host_values) const = 0;
  virtual void selectAtLeast(const float* x, size_t n, float threshold,
                             std::vector<uint32_t>& host_indices,
                             std::vector<float>& host_values) const = 0;
  virtual void gather(const float* x, const uint32_t* host_indices, size_t k,
                      float* host_values) const = 0;
  // The sign codec's encode of x (kernels/cpu/sign_pack.h, buckets of `bucket`), its payload
  // replacing host_payload; where `residual` (device memory) is not null, what error
  // feedback keeps: residual = x - the payload's decoded value.
  virtual void encodeSign(const float* x, size_t n, size_t bucket,
                          std::vector<uint8_t>& host_payload, float* residual) const = 0;
  // The fp16 or bf16 codec's encode of x (n 16-bit patterns, rounded to nearest even; the
  // precision kBf16 or kFp16), replacing host_payload; `residual` as encodeSign's.
  virtual void encodeHalf(const float* x, size_t n, kernels::Precision precision,
                          std::vector<uint8_t>& host_payload, float* residual) const = 0;
  // The qsgd codec's encode of x (kernels/cpu/qsgd_quantize.h: `bits`, buckets of `bucket`,
  // rounded as `rounding` says), replacing host_payload; `residual` as encodeSign's.
  virtual void encodeQsgd(const float* x, size_t n, int bits, size_t bucket,
                          kernels::QsgdRounding rounding, std::vector<uint8_t>& host_payload,
                          float* residual) const = 0;
  // C (m, n) = alpha * op(A) . op(B) + beta * C, row-major as kernels::sgemm, all three in
  // this device's memory (PowerSGD's projections, engine/train/device_powersgd_sync.h).
  virtual void gemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k,
                    float alpha, const float* a, int lda, const float* b, int ldb, float beta,
                    float* c, int ldc) const = 0;
  // Returns once the work queued on the device is done (phase timing).
  virtual void synchronize() const = 0;
  // Marks in this device's queue, timed on its clock (the host's where work is done when
  // queued, as on the CPU).
  virtual std::unique_ptr<DeviceTimer> makeTimer() const { return makeHostTimer(); }
};

// The host: layers over kernels/cpu (OpenBLAS, oneDNN, our AVX kernels), host memory.
const ComputeDevice& cpuDevice();

// How a GPU computes, from the job.
struct DeviceOptions {
  bool tf32 = false;  // train.tf32: fp32 products on TF32 tensor cores
};

// The device a job's train.device names: "cpu", "cuda" (this rank's GPU: its local rank
// modulo the GPUs it sees) or "cuda:N". Throws std::invalid_argument naming the value and
// why it cannot be used (a build without CUDA, no usable GPU, N out of range, options the
// CPU does not have).
const ComputeDevice& deviceNamed(const std::string& spec, int local_rank = 0,
                                 DeviceOptions options = {});

// A device a train.device name stands for beside the built-in ones (a test's device, whose
// memory the host may not touch): `make` gives it for a rank's local index, and may be
// called from every rank's thread. Job files name only the built-in devices (validation).
using DeviceMaker = std::function<const ComputeDevice&(int local_rank)>;
void registerDevice(const std::string& name, DeviceMaker make);

}  // namespace ranklab
