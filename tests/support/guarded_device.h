// Test support: a device that computes with the CPU's kernels but whose memory the host may
// not touch, as a GPU's. Every buffer is a mapping of its own, PROT_NONE except while one of
// the device's own operations that named it runs (a layer's pass, a copy, an update), so a
// host read or write of device memory (a missed staging copy) stops the test with SIGSEGV
// at the faulty line; and every operation checks its pointers' sides: a host pointer passed
// where the device's memory belongs (which a GPU would fault on) throws naming the argument.
// Registered as train.device = "guarded" (one device per rank, as GPUs are).
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/model/layers.h"
#include "engine/model/softmax_cross_entropy.h"

namespace ranklab::testing {

class GuardedDevice : public ComputeDevice {
 public:
  explicit GuardedDevice(int index) : index_(index) {}

  // Unlocks, for one of its operations, the buffers this thread's expectDevice() calls just
  // named, and only those (nested and concurrent operations too): an operation that reads a
  // buffer it did not name faults as the host would.
  class Open {
   public:
    explicit Open(const GuardedDevice& device)
        : device_(device), regions_(std::exchange(named(), {})) {
      device_.unlock(regions_);
    }
    ~Open() { device_.relock(regions_); }
    Open(const Open&) = delete;
    Open& operator=(const Open&) = delete;

   private:
    const GuardedDevice& device_;
    std::vector<char*> regions_;
  };
  // Throws naming `what` unless [p, p + bytes) lies in one of this device's buffers, which the
  // next Open on this thread then unlocks.
  void expectDevice(const void* p, size_t bytes, const std::string& what) const {
    if (p == nullptr || bytes == 0) return;
    char* region = regionOf(p, bytes);
    if (region == nullptr)
      throw std::logic_error(name() + ": " + what + " is not this device's memory");
    std::vector<char*>& regions = named();
    if (std::find(regions.begin(), regions.end(), region) == regions.end())
      regions.push_back(region);
  }
  // Throws naming `what` if p is in one of this device's buffers.
  void expectHost(const void* p, const std::string& what) const {
    if (inBuffer(p, 1))
      throw std::logic_error(name() + ": " + what + " is device memory, not the host's");
  }

  std::string name() const override { return "guarded:" + std::to_string(index_); }
  std::unique_ptr<Layer> makeLayer(const LayerRequest& request) const override;
  std::unique_ptr<LossHead> makeLossHead() const override;
  std::unique_ptr<ConvKernel> makeConvKernel(const ConvSpec& spec) const override;
  std::unique_ptr<DeviceBuffer> allocate(size_t floats) const override;
  bool hostMemory() const override { return false; }

  void upload(float* to, const float* host, size_t n) const override {
    expectDevice(to, n * sizeof(float), "upload's destination");
    expectHost(host, "upload's source");
    floats_uploaded += static_cast<int64_t>(n);
    const Open open(*this);
    cpuDevice().upload(to, host, n);
  }
  void download(float* host, const float* from, size_t n) const override {
    expectDevice(from, n * sizeof(float), "download's source");
    expectHost(host, "download's destination");
    floats_downloaded += static_cast<int64_t>(n);
    const Open open(*this);
    cpuDevice().download(host, from, n);
  }
  void uploadBytes(uint8_t* to, const uint8_t* host, size_t n) const override {
    expectDevice(to, n, "upload's destination");
    expectHost(host, "upload's source");
    const Open open(*this);
    cpuDevice().uploadBytes(to, host, n);
  }
  void copy(float* to, const float* from, size_t n) const override {
    expectDevice(to, n * sizeof(float), "copy's destination");
    expectDevice(from, n * sizeof(float), "copy's source");
    const Open open(*this);
    cpuDevice().copy(to, from, n);
  }
  void fill(float* to, size_t n, float value) const override {
    expectDevice(to, n * sizeof(float), "fill's buffer");
    const Open open(*this);
    cpuDevice().fill(to, n, value);
  }
  void sgdUpdate(float* params, const float* grads, float* velocity, size_t n, float lr,
                 float momentum, float weight_decay, bool nesterov) const override {
    expectDevice(params, n * sizeof(float), "sgd's parameters");
    expectDevice(grads, n * sizeof(float), "sgd's gradients");
    expectDevice(velocity, n * sizeof(float), "sgd's velocity");  // null: none kept
    const Open open(*this);
    cpuDevice().sgdUpdate(params, grads, velocity, n, lr, momentum, weight_decay, nesterov);
  }
  void adamUpdate(float* params, const float* grads, float* first_moment, float* second_moment,
                  size_t n, const kernels::AdamScalars& s) const override {
    for (const float* p :
         {static_cast<const float*>(params), grads, static_cast<const float*>(first_moment),
          static_cast<const float*>(second_moment)})
      expectDevice(p, n * sizeof(float), "adam's buffers");
    const Open open(*this);
    cpuDevice().adamUpdate(params, grads, first_moment, second_moment, n, s);
  }
  bool scaleAndCheckFinite(float* grads, size_t n, float factor) const override {
    expectDevice(grads, n * sizeof(float), "unscale's gradients");
    const Open open(*this);
    return cpuDevice().scaleAndCheckFinite(grads, n, factor);
  }
  double sumOfSquares(const float* x, size_t n) const override {
    expectDevice(x, n * sizeof(float), "the norm's gradient");
    const Open open(*this);
    return cpuDevice().sumOfSquares(x, n);
  }
  void add(float* to, const float* from, size_t n) const override {
    expectDevice(to, n * sizeof(float), "add's destination");
    expectDevice(from, n * sizeof(float), "add's source");
    const Open open(*this);
    cpuDevice().add(to, from, n);
  }
  void accumulateMomentum(float* velocity, float* grads, size_t n, float momentum) const override {
    expectDevice(velocity, n * sizeof(float), "momentum's velocity");
    expectDevice(grads, n * sizeof(float), "momentum's gradients");
    const Open open(*this);
    cpuDevice().accumulateMomentum(velocity, grads, n, momentum);
  }
  void scatter(float* to, size_t n, const uint32_t* host_indices, const float* host_values,
               size_t k) const override {
    expectDevice(to, n * sizeof(float), "scatter's destination");
    expectHost(host_indices, "scatter's indices");
    expectHost(host_values, "scatter's values");
    const Open open(*this);
    cpuDevice().scatter(to, n, host_indices, host_values, k);  // refuses an index not below n
  }
  void selectTopk(const float* x, size_t n, size_t k, std::vector<uint32_t>& host_indices,
                  std::vector<float>& host_values) const override {
    expectDevice(x, n * sizeof(float), "topk's input");
    ++codec_encodes;
    const Open open(*this);
    cpuDevice().selectTopk(x, n, k, host_indices, host_values);
  }
  void selectAtLeast(const float* x, size_t n, float threshold, std::vector<uint32_t>& host_indices,
                     std::vector<float>& host_values) const override {
    expectDevice(x, n * sizeof(float), "threshold's input");
    ++codec_encodes;
    const Open open(*this);
    cpuDevice().selectAtLeast(x, n, threshold, host_indices, host_values);
  }
  void gather(const float* x, const uint32_t* host_indices, size_t k,
              float* host_values) const override {
    expectHost(host_indices, "gather's indices");
    expectHost(host_values, "gather's values");
    ++codec_encodes;
    for (size_t j = 0; j < k; ++j)  // each source checked: an index past the buffer
      expectDevice(x + host_indices[j], sizeof(float), "gather's source");
    const Open open(*this);
    cpuDevice().gather(x, host_indices, k, host_values);
  }
  void encodeSign(const float* x, size_t n, size_t bucket, std::vector<uint8_t>& host_payload,
                  float* residual) const override {
    expectDevice(x, n * sizeof(float), "sign's input");
    if (residual) expectDevice(residual, n * sizeof(float), "sign's residual");
    ++codec_encodes;
    const Open open(*this);
    cpuDevice().encodeSign(x, n, bucket, host_payload, residual);
  }
  void encodeHalf(const float* x, size_t n, kernels::Precision precision,
                  std::vector<uint8_t>& host_payload, float* residual) const override {
    expectDevice(x, n * sizeof(float), "the cast's input");
    if (residual) expectDevice(residual, n * sizeof(float), "the cast's residual");
    ++codec_encodes;
    const Open open(*this);
    cpuDevice().encodeHalf(x, n, precision, host_payload, residual);
  }
  void encodeQsgd(const float* x, size_t n, int bits, size_t bucket, kernels::QsgdRounding rounding,
                  std::vector<uint8_t>& host_payload, float* residual) const override {
    expectDevice(x, n * sizeof(float), "qsgd's input");
    if (residual) expectDevice(residual, n * sizeof(float), "qsgd's residual");
    ++codec_encodes;
    const Open open(*this);
    cpuDevice().encodeQsgd(x, n, bits, bucket, rounding, host_payload, residual);
  }
  void gemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k, float alpha,
            const float* a, int lda, const float* b, int ldb, float beta, float* c,
            int ldc) const override {
    const bool ta = trans_a == kernels::Trans::kYes, tb = trans_b == kernels::Trans::kYes;
    expectDevice(a, span(ta ? k : m, ta ? m : k, lda) * sizeof(float), "gemm's A");
    expectDevice(b, span(tb ? n : k, tb ? k : n, ldb) * sizeof(float), "gemm's B");
    expectDevice(c, span(m, n, ldc) * sizeof(float), "gemm's C");
    ++gemms;
    const Open open(*this);
    cpuDevice().gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void castFromFp32(kernels::Precision precision, const float* x, uint16_t* out,
                    size_t n) const override {
    expectDevice(x, n * sizeof(float), "the cast's input");
    expectDevice(out, n * sizeof(uint16_t), "the cast's output");
    const Open open(*this);
    cpuDevice().castFromFp32(precision, x, out, n);
  }
  void mixedGemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k,
                 const DeviceGemmInput& a, int lda, const DeviceGemmInput& b, int ldb, float beta,
                 float* c, int ldc) const override {
    const bool ta = trans_a == kernels::Trans::kYes, tb = trans_b == kernels::Trans::kYes;
    expectOperand(a, span(ta ? k : m, ta ? m : k, lda), "gemm's A");
    expectOperand(b, span(tb ? n : k, tb ? k : n, ldb), "gemm's B");
    expectDevice(c, span(m, n, ldc) * sizeof(float), "gemm's C");
    const Open open(*this);
    cpuDevice().mixedGemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc);
  }
  void linearForward(const DeviceGemmInput& x, const DeviceGemmInput& w, const float* bias,
                     float* y, int rows, int in, int out, bool relu) const override {
    expectOperand(x, size_t(rows) * in, "linear's input");
    expectOperand(w, size_t(out) * in, "linear's weight");
    expectDevice(bias, out * sizeof(float), "linear's bias");
    expectDevice(y, size_t(rows) * out * sizeof(float), "linear's output");
    const Open open(*this);
    cpuDevice().linearForward(x, w, bias, y, rows, in, out, relu);
  }
  void sumRows(float* db, const float* dy, int rows, int cols, bool accumulate) const override {
    expectDevice(db, cols * sizeof(float), "the column sums");
    expectDevice(dy, size_t(rows) * cols * sizeof(float), "the summed rows");
    const Open open(*this);
    cpuDevice().sumRows(db, dy, rows, cols, accumulate);
  }
  void reluMaskSumRows(const float* dy, const float* y, float* dz, float* db, int rows, int cols,
                       bool accumulate) const override {
    for (const float* p : {dy, y, static_cast<const float*>(dz)})
      expectDevice(p, size_t(rows) * cols * sizeof(float), "the masked gradient's buffers");
    expectDevice(db, cols * sizeof(float), "the column sums");
    const Open open(*this);
    cpuDevice().reluMaskSumRows(dy, y, dz, db, rows, cols, accumulate);
  }
  size_t softmaxXentWorkspaceBytes(int) const override { return 0; }
  BatchLoss softmaxXentForward(const float* logits, const uint8_t* labels, float* probs, int rows,
                               int classes, void* workspace) const override {
    const size_t values = size_t(rows) * classes;
    expectDevice(logits, values * sizeof(float), "the loss's logits");
    expectDevice(labels, rows, "the loss's labels");
    expectDevice(probs, values * sizeof(float), "the loss's probabilities");
    const Open open(*this);
    return cpuDevice().softmaxXentForward(logits, labels, probs, rows, classes, workspace);
  }
  void softmaxXentBackward(float* dlogits, const float* probs, const uint8_t* labels, int rows,
                           int classes, float scale) const override {
    const size_t values = size_t(rows) * classes;
    expectDevice(dlogits, values * sizeof(float), "the loss's gradient");
    expectDevice(probs, values * sizeof(float), "the loss's probabilities");
    expectDevice(labels, rows, "the loss's labels");
    const Open open(*this);
    cpuDevice().softmaxXentBackward(dlogits, probs, labels, rows, classes, scale);
  }
  void embeddingForward(const float* tokens, const float* token_table, const float* position_table,
                        float* y, int batch, int length, int width, int vocab) const override {
    const size_t positions = size_t(batch) * length;
    expectDevice(tokens, positions * sizeof(float), "the embedding's tokens");
    expectDevice(token_table, size_t(vocab) * width * sizeof(float), "the token table");
    expectDevice(position_table, size_t(length) * width * sizeof(float), "the position table");
    expectDevice(y, positions * width * sizeof(float), "the embedding's output");
    const Open open(*this);
    cpuDevice().embeddingForward(tokens, token_table, position_table, y, batch, length, width,
                                 vocab);
  }
  void embeddingBackward(const float* tokens, const float* dy, float* dtoken_table,
                         float* dposition_table, int batch, int length, int width, int vocab,
                         bool accumulate_positions) const override {
    const size_t positions = size_t(batch) * length;
    expectDevice(tokens, positions * sizeof(float), "the embedding's tokens");
    expectDevice(dy, positions * width * sizeof(float), "the embedding's output gradient");
    expectDevice(dtoken_table, size_t(vocab) * width * sizeof(float), "the token gradient");
    expectDevice(dposition_table, size_t(length) * width * sizeof(float), "the position gradient");
    const Open open(*this);
    cpuDevice().embeddingBackward(tokens, dy, dtoken_table, dposition_table, batch, length, width,
                                  vocab, accumulate_positions);
  }
  size_t layerNormScratchFloats(size_t, int) const override { return 0; }
  void layerNormForward(const float* x, const float* weight, const float* bias, float* y,
                        float* mean, float* rstd, size_t rows, int width,
                        float eps) const override {
    const size_t values = rows * width * sizeof(float);
    expectDevice(x, values, "layer norm's input");
    expectDevice(y, values, "layer norm's output");
    for (const float* p : {weight, bias})
      expectDevice(p, width * sizeof(float), "layer norm's weight or bias");
    for (const float* p : {mean, rstd}) expectDevice(p, rows * sizeof(float), "layer norm's rows");
    const Open open(*this);
    cpuDevice().layerNormForward(x, weight, bias, y, mean, rstd, rows, width, eps);
  }
  void layerNormBackward(const float* x, const float* weight, const float* mean, const float* rstd,
                         const float* dy, float* dx, float* dweight, float* dbias, size_t rows,
                         int width, bool accumulate, float* scratch) const override {
    const size_t values = rows * width * sizeof(float);
    for (const float* p : {x, dy, static_cast<const float*>(dx)})
      expectDevice(p, values, "layer norm's gradient buffers");
    for (const float* p :
         {weight, static_cast<const float*>(dweight), static_cast<const float*>(dbias)})
      expectDevice(p, width * sizeof(float), "layer norm's parameter gradients");
    for (const float* p : {mean, rstd}) expectDevice(p, rows * sizeof(float), "layer norm's rows");
    const Open open(*this);
    cpuDevice().layerNormBackward(x, weight, mean, rstd, dy, dx, dweight, dbias, rows, width,
                                  accumulate, scratch);
  }
  void geluForward(const float* x, float* y, float* slope, size_t n) const override {
    for (const float* p : {x, static_cast<const float*>(y), static_cast<const float*>(slope)})
      expectDevice(p, n * sizeof(float), "gelu's buffers");
    const Open open(*this);
    cpuDevice().geluForward(x, y, slope, n);
  }
  void geluBackward(const float* slope, const float* dy, float* dx, size_t n) const override {
    for (const float* p : {slope, dy, static_cast<const float*>(dx)})
      expectDevice(p, n * sizeof(float), "gelu's gradient buffers");
    const Open open(*this);
    cpuDevice().geluBackward(slope, dy, dx, n);
  }
  size_t attentionScratchFloats(int, int) const override { return 0; }
  void causalAttentionForward(const float* qkv, float* y, float* probs, int batch, int length,
                              int width, int heads) const override {
    const size_t positions = size_t(batch) * length;
    expectDevice(qkv, positions * 3 * width * sizeof(float), "attention's q|k|v");
    expectDevice(y, positions * width * sizeof(float), "attention's output");
    expectDevice(probs, positions * heads * length * sizeof(float), "attention's probabilities");
    const Open open(*this);
    cpuDevice().causalAttentionForward(qkv, y, probs, batch, length, width, heads);
  }
  void causalAttentionBackward(const float* qkv, const float* probs, const float* dy, float* dqkv,
                               int batch, int length, int width, int heads,
                               float* scratch) const override {
    const size_t positions = size_t(batch) * length;
    for (const float* p : {qkv, static_cast<const float*>(dqkv)})
      expectDevice(p, positions * 3 * width * sizeof(float), "attention's q|k|v buffers");
    expectDevice(dy, positions * width * sizeof(float), "attention's output gradient");
    expectDevice(probs, positions * heads * length * sizeof(float), "attention's probabilities");
    const Open open(*this);
    cpuDevice().causalAttentionBackward(qkv, probs, dy, dqkv, batch, length, width, heads, scratch);
  }
  void relu(const float* x, float* y, size_t n) const override {
    expectDevice(x, n * sizeof(float), "relu's input");
    expectDevice(y, n * sizeof(float), "relu's output");
    const Open open(*this);
    cpuDevice().relu(x, y, n);
  }
  void reluGradient(const float* dy, const float* y, float* dx, size_t n) const override {
    for (const float* p : {dy, y, static_cast<const float*>(dx)})
      expectDevice(p, n * sizeof(float), "relu's gradient buffers");
    const Open open(*this);
    cpuDevice().reluGradient(dy, y, dx, n);
  }
  void maxPool2x2Forward(const float* x, float* y, uint8_t* argmax, int batch, int height,
                         int width, int channels) const override {
    const size_t in = size_t(batch) * height * width * channels;
    const size_t out = size_t(batch) * (height / 2) * (width / 2) * channels;
    expectDevice(x, in * sizeof(float), "max-pool's input");
    expectDevice(y, out * sizeof(float), "max-pool's output");
    expectDevice(argmax, out, "max-pool's winners");
    const Open open(*this);
    cpuDevice().maxPool2x2Forward(x, y, argmax, batch, height, width, channels);
  }
  void maxPool2x2Backward(const float* dy, const uint8_t* argmax, float* dx, int batch, int height,
                          int width, int channels) const override {
    const size_t in = size_t(batch) * height * width * channels;
    const size_t out = size_t(batch) * (height / 2) * (width / 2) * channels;
    expectDevice(dy, out * sizeof(float), "max-pool's output gradient");
    expectDevice(argmax, out, "max-pool's winners");
    expectDevice(dx, in * sizeof(float), "max-pool's input gradient");
    const Open open(*this);
    cpuDevice().maxPool2x2Backward(dy, argmax, dx, batch, height, width, channels);
  }
  void dropoutMask(uint64_t key, float p, float* scale, size_t n) const override {
    expectDevice(scale, n * sizeof(float), "dropout's mask");
    const Open open(*this);
    cpuDevice().dropoutMask(key, p, scale, n);
  }
  void multiply(const float* a, const float* b, float* out, size_t n) const override {
    for (const float* p : {a, b, static_cast<const float*>(out)})
      expectDevice(p, n * sizeof(float), "multiply's buffers");
    const Open open(*this);
    cpuDevice().multiply(a, b, out, n);
  }
  void transposeEach(const float* x, float* y, int batch, size_t rows, size_t cols) const override {
    expectDevice(x, batch * rows * cols * sizeof(float), "transpose's input");
    expectDevice(y, batch * rows * cols * sizeof(float), "transpose's output");
    const Open open(*this);
    cpuDevice().transposeEach(x, y, batch, rows, cols);
  }
  void synchronize() const override {}

  // What crossed between host and device through download() and upload(), and how often
  // a codec picked or encoded on the device (counted from any thread).
  mutable std::atomic<int64_t> floats_downloaded = 0;
  mutable std::atomic<int64_t> floats_uploaded = 0;
  mutable std::atomic<int> gemms = 0;  // products run through gemm()
  mutable std::atomic<int> codec_encodes = 0;

  // The buffers' bookkeeping (GuardedBuffer's).
  void track(char* data, size_t bytes) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    regions_[data] = bytes;
    protect(data, bytes);
  }
  void untrack(char* data) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    regions_.erase(data);
    opened_.erase(data);
  }

 private:
  // The values a row-major (rows, cols) operand with leading dimension ld spans.
  static size_t span(int rows, int cols, int ld) {
    return rows == 0 || cols == 0 ? 0 : (rows - 1) * static_cast<size_t>(ld) + cols;
  }
  // A product's input: its fp32 values, and in bf16/fp16 its cast copy, the device's.
  void expectOperand(const DeviceGemmInput& in, size_t values, const std::string& what) const {
    expectDevice(in.f32, values * sizeof(float), what);
    if (in.precision != kernels::Precision::kFp32)
      expectDevice(in.low, values * sizeof(uint16_t), what + "'s cast copy");
  }
  // The buffer [p, p + bytes) lies in, or null.
  char* regionOf(const void* p, size_t bytes) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    const char* c = static_cast<const char*>(p);
    auto after = regions_.upper_bound(const_cast<char*>(c));
    if (after == regions_.begin()) return nullptr;
    const auto& [start, length] = *std::prev(after);
    return c + bytes <= start + length ? start : nullptr;
  }
  bool inBuffer(const void* p, size_t bytes) const { return regionOf(p, bytes) != nullptr; }
  // The buffers this thread named since its last Open.
  static std::vector<char*>& named() {
    thread_local std::vector<char*> regions;
    return regions;
  }
  void unlock(const std::vector<char*>& regions) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (char* r : regions)
      if (opened_[r]++ == 0 && regions_.count(r)) mprotect(r, regions_[r], PROT_READ | PROT_WRITE);
  }
  void relock(const std::vector<char*>& regions) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (char* r : regions) {
      auto it = opened_.find(r);
      if (it == opened_.end()) continue;  // freed meanwhile
      if (--it->second == 0 && regions_.count(r)) mprotect(r, regions_[r], PROT_NONE);
    }
  }
  // A new buffer starts locked.
  void protect(char* data, size_t bytes) const { mprotect(data, bytes, PROT_NONE); }

  int index_;
  mutable std::mutex mutex_;
  mutable std::map<char*, size_t> regions_;  // each buffer's pages
  mutable std::map<char*, int> opened_;      // the Opens holding each buffer
};

// `floats` floats in pages of their own, zeroed, known to the device that made them.
class GuardedBuffer : public DeviceBuffer {
 public:
  GuardedBuffer(const GuardedDevice& device, size_t floats) : device_(device), size_(floats) {
    if (floats == 0) return;
    bytes_ = (floats * sizeof(float) + 4095) / 4096 * 4096;
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<float*>(p);
    device_.track(reinterpret_cast<char*>(data_), bytes_);
  }
  ~GuardedBuffer() override {
    if (data_ == nullptr) return;
    device_.untrack(reinterpret_cast<char*>(data_));
    munmap(data_, bytes_);
  }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  float* data() override { return data_; }
  size_t size() const override { return size_; }

 private:
  const GuardedDevice& device_;
  size_t size_, bytes_ = 0;
  float* data_ = nullptr;
};

// The CPU's convolution over the device's memory: its pointers checked, and unlocked only
// for its passes (its own scratch is host memory, as a GPU's algorithm keeps its own).
class GuardedConvKernel : public ConvKernel {
 public:
  GuardedConvKernel(const GuardedDevice& device, const ConvSpec& spec)
      : device_(device), spec_(spec), inner_(cpuDevice().makeConvKernel(spec)) {}
  void forward(const float* x, const float* w, const float* b, float* y, int batch,
               kernels::Precision precision) override {
    expectTensors(x, w, y, batch);
    device_.expectDevice(b, spec_.out_channels * sizeof(float), "conv's bias");
    const GuardedDevice::Open open(device_);
    inner_->forward(x, w, b, y, batch, precision);
  }
  void backward(const float* x, const float* w, const float* dy, float* dx, float* dw, float* db,
                int batch, kernels::Precision precision, bool accumulate) override {
    expectTensors(x, w, dy, batch);
    device_.expectDevice(dx, inputBytes(batch), "conv's input gradient");
    device_.expectDevice(dw, weightBytes(), "conv's weight gradient");
    device_.expectDevice(db, spec_.out_channels * sizeof(float), "conv's bias gradient");
    const GuardedDevice::Open open(device_);
    inner_->backward(x, w, dy, dx, dw, db, batch, precision, accumulate);
  }
  std::vector<kernels::GemmShape> gemms(int batch) const override { return inner_->gemms(batch); }

 private:
  size_t inputBytes(int batch) const { return batch * spec_.input.size() * sizeof(float); }
  size_t weightBytes() const {
    return size_t(spec_.out_channels) * spec_.input.channels * spec_.kernel * spec_.kernel *
           sizeof(float);
  }
  // x, w and the output (or its gradient), each the device's.
  void expectTensors(const float* x, const float* w, const float* y, int batch) const {
    device_.expectDevice(x, inputBytes(batch), "conv's input");
    device_.expectDevice(w, weightBytes(), "conv's weight");
    device_.expectDevice(y, 1, "conv's output or its gradient");
  }
  const GuardedDevice& device_;
  ConvSpec spec_;
  std::unique_ptr<ConvKernel> inner_;
};

inline std::unique_ptr<Layer> GuardedDevice::makeLayer(const LayerRequest& request) const {
  // The layers, written once, run on this device's checked passes, its memory locked between.
  return makeLayerOn(request, *this);
}

inline std::unique_ptr<ConvKernel> GuardedDevice::makeConvKernel(const ConvSpec& spec) const {
  return std::make_unique<GuardedConvKernel>(*this, spec);
}

inline std::unique_ptr<LossHead> GuardedDevice::makeLossHead() const {
  return std::make_unique<SoftmaxCrossEntropy>(*this);
}

inline std::unique_ptr<DeviceBuffer> GuardedDevice::allocate(size_t floats) const {
  return std::make_unique<GuardedBuffer>(*this, floats);
}

// train.device = "guarded": rank r's own GuardedDevice (never destroyed: buffers outlive
// runs in tests that keep a network).
inline void registerGuardedDevices() {
  registerDevice("guarded", [](int local_rank) -> const ComputeDevice& {
    static std::mutex mutex;
    static std::map<int, std::unique_ptr<GuardedDevice>> devices;
    const std::lock_guard<std::mutex> lock(mutex);
    auto& device = devices[local_rank];
    if (!device) device = std::make_unique<GuardedDevice>(local_rank);
    return *device;
  });
}

// Rank r's guarded device, to read its counters (registerGuardedDevices() first).
inline GuardedDevice& guarded(int local_rank) {
  return const_cast<GuardedDevice&>(
      dynamic_cast<const GuardedDevice&>(deviceNamed("guarded", local_rank)));
}

}  // namespace ranklab::testing
