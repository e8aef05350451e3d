// The CUDA device: the layers (layers.h, written once) over its passes and its own
// convolution (cuda_conv_kernel.h), cudaMalloc'd buffers, and the memory and optimizer loops of
// kernels/cuda/memory_kernels.h. Every entry point makes its GPU current
// first (cudaSetDevice is cheap when it already is), so whichever thread calls (the
// engine's communication thread too) works on the right GPU. Each thread's work goes to its
// own default stream (per-thread, kernels/CMakeLists.txt): it is ordered after that thread's
// earlier work alone, and synchronize() waits for it alone.
#include "engine/model/cuda_device.h"

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "engine/model/cuda_conv_kernel.h"
#include "engine/model/layers.h"
#include "engine/model/softmax_cross_entropy.h"
#include "kernels/cuda/codec_kernels.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/layer_kernels.h"
#include "kernels/cuda/memory_kernels.h"
#include "kernels/cuda/transformer_kernels.h"
#include "kernels/gpu_probe.h"

namespace ranklab {

using cuda::check;
namespace {

// `floats` floats of one GPU's memory, zeroed.
class CudaBuffer : public DeviceBuffer {
 public:
  CudaBuffer(int device, size_t floats) : size_(floats) {
    if (floats == 0) return;
    check(cudaSetDevice(device), "set device (allocate)");
    check(cudaMalloc(&data_, floats * sizeof(float)), "malloc buffer");
    // Zeroed before it is returned: another thread's stream may write it next.
    cudaError_t zeroed = cudaMemsetAsync(data_, 0, floats * sizeof(float), cudaStreamPerThread);
    if (zeroed == cudaSuccess) zeroed = cudaStreamSynchronize(cudaStreamPerThread);
    if (zeroed != cudaSuccess) {
      cudaFree(data_);
      check(zeroed, "zero buffer");
    }
  }
  ~CudaBuffer() override {
    // No throw from a destructor; at process exit the runtime may already be gone.
    if (data_ != nullptr) cudaFree(data_);
  }
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;

  float* data() override { return data_; }
  size_t size() const override { return size_; }

 private:
  float* data_ = nullptr;
  size_t size_;
};

// Marks as CUDA events on the calling thread's own stream, where that thread's layers, copies
// and update are queued (the trace is the training thread's); the events are made once and
// reused from step to step.
class CudaTimer : public DeviceTimer {
 public:
  explicit CudaTimer(int device) : device_(device) {}
  ~CudaTimer() override {
    for (cudaEvent_t event : events_) cudaEventDestroy(event);
  }
  CudaTimer(const CudaTimer&) = delete;
  CudaTimer& operator=(const CudaTimer&) = delete;

  size_t mark() override {
    check(cudaSetDevice(device_), "set device (timer)");
    if (count_ == events_.size()) {
      cudaEvent_t event = nullptr;
      check(cudaEventCreate(&event), "create timing event");
      events_.push_back(event);
    }
    check(cudaEventRecord(events_[count_], cudaStreamPerThread), "record timing event");
    return count_++;
  }

  int64_t elapsedNs(size_t from, size_t to) const override {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, events_[from], events_[to]), "time between events");
    return static_cast<int64_t>(static_cast<double>(ms) * 1e6);
  }

  void clear() override { count_ = 0; }

 private:
  int device_;
  std::vector<cudaEvent_t> events_;
};

class CudaDevice : public ComputeDevice {
 public:
  CudaDevice(int index, DeviceOptions options) : index_(index), options_(options) {}

  std::string name() const override { return "cuda:" + std::to_string(index_); }

  std::unique_ptr<Layer> makeLayer(const LayerRequest& request) const override {
    use();
    return makeLayerOn(request, *this);
  }
  std::unique_ptr<ConvKernel> makeConvKernel(const ConvSpec& spec) const override {
    return makeCudaConvKernel(spec, *this, index_);
  }

  void castFromFp32(kernels::Precision precision, const float* x, uint16_t* out,
                    size_t n) const override {
    use();
    cuda::castFromFp32(precision, x, out, n);
  }
  // fp32 products on TF32 tensor cores where the job allows them (train.tf32).
  void mixedGemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k,
                 const DeviceGemmInput& a, int lda, const DeviceGemmInput& b, int ldb, float beta,
                 float* c, int ldc) const override {
    if (a.precision != b.precision) throw std::logic_error("gemm: operands in two precisions");
    use();
    if (a.precision == kernels::Precision::kFp32) {
      cuda::sgemm(trans_a, trans_b, m, n, k, 1.f, a.f32, lda, b.f32, ldb, beta, c, ldc,
                  options_.tf32);
    } else {
      cuda::gemmLowPrecision(a.precision, trans_a, trans_b, m, n, k, 1.f, a.low, lda, b.low, ldb,
                             beta, c, ldc);
    }
  }
  void linearForward(const DeviceGemmInput& x, const DeviceGemmInput& w, const float* bias,
                     float* y, int rows, int in, int out, bool relu) const override {
    // The product, then bias and ReLU in one pass.
    mixedGemm(kernels::Trans::kNo, kernels::Trans::kYes, rows, out, in, x, in, w, in, 0.f, y, out);
    cuda::addBiasAndRelu(y, bias, rows, out, relu);
  }
  void sumRows(float* db, const float* dy, int rows, int cols, bool accumulate) const override {
    use();
    cuda::sumRows(db, dy, rows, cols, accumulate);
  }
  void reluMaskSumRows(const float* dy, const float* y, float* dz, float* db, int rows, int cols,
                       bool accumulate) const override {
    use();
    cuda::reluMaskSumRows(dy, y, dz, db, rows, cols, accumulate);
  }
  void relu(const float* x, float* y, size_t n) const override {
    use();
    cuda::applyRelu(x, y, n);
  }
  void reluGradient(const float* dy, const float* y, float* dx, size_t n) const override {
    use();
    cuda::reluGradient(dy, y, dx, n);
  }
  void maxPool2x2Forward(const float* x, float* y, uint8_t* argmax, int batch, int height,
                         int width, int channels) const override {
    use();
    cuda::maxPool2x2Forward(x, y, argmax, batch, height, width, channels);
  }
  void maxPool2x2Backward(const float* dy, const uint8_t* argmax, float* dx, int batch, int height,
                          int width, int channels) const override {
    use();
    cuda::maxPool2x2Backward(dy, argmax, dx, batch, height, width, channels);
  }
  void dropoutMask(uint64_t key, float p, float* scale, size_t n) const override {
    use();
    cuda::dropoutMask(key, p, scale, n);
  }
  void multiply(const float* a, const float* b, float* out, size_t n) const override {
    use();
    cuda::multiply(a, b, out, n);
  }
  size_t softmaxXentWorkspaceBytes(int rows) const override {
    return cuda::softmaxXentWorkspaceBytes(rows);
  }
  BatchLoss softmaxXentForward(const float* logits, const uint8_t* labels, float* probs, int rows,
                               int classes, void* workspace) const override {
    use();
    const cuda::XentTotals totals =
        cuda::softmaxXentForward(logits, labels, probs, rows, classes, workspace);
    return {totals.loss_sum, totals.correct};
  }
  void softmaxXentBackward(float* dlogits, const float* probs, const uint8_t* labels, int rows,
                           int classes, float scale) const override {
    use();
    cuda::softmaxXentBackward(dlogits, probs, labels, rows, classes, scale);
  }
  void embeddingForward(const float* tokens, const float* token_table, const float* position_table,
                        float* y, int batch, int length, int width, int vocab) const override {
    use();
    cuda::embeddingForward(tokens, token_table, position_table, y, batch, length, width, vocab);
  }
  void embeddingBackward(const float* tokens, const float* dy, float* dtoken_table,
                         float* dposition_table, int batch, int length, int width, int vocab,
                         bool accumulate_positions) const override {
    use();
    cuda::embeddingBackward(tokens, dy, dtoken_table, dposition_table, batch, length, width, vocab,
                            accumulate_positions);
  }
  // The per-column sums of dy * xhat.
  size_t layerNormScratchFloats(size_t rows, int width) const override {
    return rows * static_cast<size_t>(width);
  }
  void layerNormForward(const float* x, const float* weight, const float* bias, float* y,
                        float* mean, float* rstd, size_t rows, int width,
                        float eps) const override {
    use();
    cuda::layerNormForward(x, weight, bias, y, mean, rstd, rows, width, eps);
  }
  void layerNormBackward(const float* x, const float* weight, const float* mean, const float* rstd,
                         const float* dy, float* dx, float* dweight, float* dbias, size_t rows,
                         int width, bool accumulate, float* scratch) const override {
    use();
    cuda::layerNormBackward(x, weight, mean, rstd, dy, dx, dweight, dbias, rows, width, accumulate,
                            scratch);
  }
  void geluForward(const float* x, float* y, float* slope, size_t n) const override {
    use();
    cuda::geluForward(x, y, slope, n);
  }
  void geluBackward(const float* slope, const float* dy, float* dx, size_t n) const override {
    use();
    cuda::geluBackward(slope, dy, dx, n);
  }
  // One sequence's dprobs at a time.
  size_t attentionScratchFloats(int heads, int length) const override {
    return static_cast<size_t>(heads) * length * length;
  }
  void causalAttentionForward(const float* qkv, float* y, float* probs, int batch, int length,
                              int width, int heads) const override {
    use();
    cuda::causalAttentionForward(qkv, y, probs, batch, length, width, heads);
  }
  void causalAttentionBackward(const float* qkv, const float* probs, const float* dy, float* dqkv,
                               int batch, int length, int width, int heads,
                               float* scratch) const override {
    use();
    cuda::causalAttentionBackward(qkv, probs, dy, dqkv, batch, length, width, heads, scratch);
  }
  void transposeEach(const float* x, float* y, int batch, size_t rows, size_t cols) const override {
    use();
    cuda::transposeEach(x, y, batch, rows, cols);
  }

  std::unique_ptr<LossHead> makeLossHead() const override {
    return std::make_unique<SoftmaxCrossEntropy>(*this);
  }

  std::unique_ptr<DeviceBuffer> allocate(size_t floats) const override {
    return std::make_unique<CudaBuffer>(index_, floats);
  }

  bool hostMemory() const override { return false; }

  void upload(float* to, const float* host, size_t n) const override {
    use();
    cuda::upload(to, host, n);
  }

  void uploadAsync(float* to, const float* host, size_t n) const override {
    use();
    cuda::uploadAsync(to, host, n * sizeof(float));
  }

  std::shared_ptr<void> pinHost(void* host, size_t bytes) const override {
    use();
    return cuda::pinHost(host, bytes);
  }

  void download(float* host, const float* from, size_t n) const override {
    use();
    cuda::download(host, from, n);
  }

  void uploadBytes(uint8_t* to, const uint8_t* host, size_t n) const override {
    use();
    if (n > 0) cuda::uploadAsync(to, host, n);
  }

  void copy(float* to, const float* from, size_t n) const override {
    use();
    cuda::copyDevice(to, from, n);
  }

  void fill(float* to, size_t n, float value) const override {
    use();
    cuda::fill(to, n, value);
  }

  void sgdUpdate(float* params, const float* grads, float* velocity, size_t n, float lr,
                 float momentum, float weight_decay, bool nesterov) const override {
    use();
    cuda::sgdUpdate(params, grads, velocity, n, lr, momentum, weight_decay, nesterov);
  }

  void adamUpdate(float* params, const float* grads, float* first_moment, float* second_moment,
                  size_t n, const kernels::AdamScalars& s) const override {
    use();
    cuda::adamUpdate(params, grads, first_moment, second_moment, n, s);
  }

  bool scaleAndCheckFinite(float* grads, size_t n, float factor) const override {
    use();
    return cuda::scaleAndCheckFinite(grads, n, factor);
  }
  double sumOfSquares(const float* x, size_t n) const override {
    use();
    return cuda::sumOfSquares(x, n);
  }
  void add(float* to, const float* from, size_t n) const override {
    use();
    cuda::addInto(to, from, n);
  }
  void accumulateMomentum(float* velocity, float* grads, size_t n, float momentum) const override {
    use();
    cuda::accumulateMomentum(velocity, grads, n, momentum);
  }
  void scatter(float* to, size_t n, const uint32_t* host_indices, const float* host_values,
               size_t k) const override {
    use();
    cuda::scatter(to, n, host_indices, host_values, k);
  }
  void selectTopk(const float* x, size_t n, size_t k, std::vector<uint32_t>& host_indices,
                  std::vector<float>& host_values) const override {
    use();
    cuda::selectTopk(x, n, k, host_indices, host_values);
  }
  void selectAtLeast(const float* x, size_t n, float threshold, std::vector<uint32_t>& host_indices,
                     std::vector<float>& host_values) const override {
    use();
    cuda::selectAtLeast(x, n, threshold, host_indices, host_values);
  }
  void gather(const float* x, const uint32_t* host_indices, size_t k,
              float* host_values) const override {
    use();
    cuda::gather(x, host_indices, k, host_values);
  }
  void encodeSign(const float* x, size_t n, size_t bucket, std::vector<uint8_t>& host_payload,
                  float* residual) const override {
    use();
    cuda::encodeSign(x, n, bucket, host_payload, residual);
  }
  void encodeHalf(const float* x, size_t n, kernels::Precision precision,
                  std::vector<uint8_t>& host_payload, float* residual) const override {
    use();
    cuda::encodeHalf(x, n, precision, host_payload, residual);
  }
  void encodeQsgd(const float* x, size_t n, int bits, size_t bucket, kernels::QsgdRounding rounding,
                  std::vector<uint8_t>& host_payload, float* residual) const override {
    use();
    cuda::encodeQsgd(x, n, bits, bucket, rounding, host_payload, residual);
  }
  void gemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k, float alpha,
            const float* a, int lda, const float* b, int ldb, float beta, float* c,
            int ldc) const override {
    use();
    cuda::sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, options_.tf32);
  }

  void synchronize() const override {
    use();
    // The caller's own work: another rank's thread on this GPU goes on undisturbed.
    check(cudaStreamSynchronize(cudaStreamPerThread), "synchronize");
  }

  std::unique_ptr<DeviceTimer> makeTimer() const override {
    return std::make_unique<CudaTimer>(index_);
  }

 private:
  void use() const { check(cudaSetDevice(index_), "set device"); }

  int index_;
  DeviceOptions options_;
};

}  // namespace

const ComputeDevice& cudaDevice(int index, DeviceOptions options) {
  std::string why;
  const int count = kernels::usableGpus(&why);
  if (index < 0 || index >= count) {
    throw std::invalid_argument("cuda device: no cuda:" + std::to_string(index) +
                                ", this process sees " + std::to_string(count) + " usable GPU(s)" +
                                (count == 0 ? " (" + why + ")" : ""));
  }
  static std::mutex mutex;
  // Never destroyed before exit; one per GPU and way of computing.
  static std::map<std::pair<int, bool>, std::unique_ptr<CudaDevice>> devices;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& device = devices[{index, options.tf32}];
  if (!device) {
    // Checked once per GPU, where it is first asked for (it makes the GPU's context).
    if (!cuda::kernelsRunOn(index, &why)) throw std::invalid_argument("cuda device: " + why);
    device = std::make_unique<CudaDevice>(index, options);
  }
  return *device;
}

}  // namespace ranklab
