#include "engine/train/powersgd_sync.h"

#include <algorithm>
#include <stdexcept>

#include "comm/collectives/allreduce_registry.h"
#include "comm/steady_clock.h"
#include "engine/train/device_encoder.h"

namespace ranklab {

using kernels::Trans;

PowerSgdSync::PowerSgdSync(Communicator& comm, const AllreduceChoice& algorithm, CodecOptions codec,
                           const ComputeDevice& device)
    : comm_(comm), device_(device), options_(std::move(codec)), allreduce_(algorithm.make(comm)) {
  if (codecTraitsOf(options_.codec).form != CodecForm::kLowRank)
    throw std::invalid_argument("PowerSgdSync: codec \"" + options_.codec +
                                "\" is not a low-rank one (powersgd)");
}

PowerSgdSync::~PowerSgdSync() = default;

void PowerSgdSync::start(float* /*params*/, size_t count) {
  count_ = count;
  powersgd_ = std::make_unique<PowerSgd>(options_.matrices, count, options_.rank,
                                         options_.warm_start, options_.seed);
  p_ = device_.allocate(std::max<size_t>(1, powersgd_->restOffset()));
  q_ = device_.allocate(std::max<size_t>(1, powersgd_->secondFloats()));
  if (options_.error_feedback) residual_ = device_.allocate(count);  // zeros
  stepped_ = false;
}

void PowerSgdSync::sum(std::vector<float>& buffer, SyncStats& stats) {
  if (comm_.size() == 1) return;
  allreduce_->run(buffer.data(), buffer.size());
  stats.bytes_tx += allreduce_->bytesSent();
  stats.bytes_rx += allreduce_->bytesReceived();
}

void PowerSgdSync::projectP(const float* grads) {
  const std::vector<float>& q = powersgd_->prepareQ();
  device_.upload(q_->data(), q.data(), q.size());
  const auto& blocks = powersgd_->blocks();
  for (size_t b = 0; b < blocks.size(); ++b) {
    const MatrixBlock& m = blocks[b];
    const int r = powersgd_->effectiveRank(b);
    // P (rows, r) = M (rows, cols) . Q (cols, r)
    device_.gemm(Trans::kNo, Trans::kNo, m.rows, r, m.cols, 1.f, grads + m.offset, m.cols,
                 q_->data() + powersgd_->qOffset(b), r, 0.f, p_->data() + powersgd_->pOffset(b), r);
  }
  std::vector<float>& first = powersgd_->firstBuffer();
  device_.download(first.data(), p_->data(), powersgd_->restOffset());
  float* rest = first.data() + powersgd_->restOffset();
  for (const auto& [begin, end] : powersgd_->rest()) {
    device_.download(rest, grads + begin, end - begin);
    rest += end - begin;
  }
}

void PowerSgdSync::projectQ(const float* grads) {
  powersgd_->orthonormalizeP();
  device_.upload(p_->data(), powersgd_->firstBuffer().data(), powersgd_->restOffset());
  const auto& blocks = powersgd_->blocks();
  for (size_t b = 0; b < blocks.size(); ++b) {
    const MatrixBlock& m = blocks[b];
    const int r = powersgd_->effectiveRank(b);
    // Q (cols, r) = M^T (cols, rows) . P^ (rows, r)
    device_.gemm(Trans::kYes, Trans::kNo, m.cols, r, m.rows, 1.f, grads + m.offset, m.cols,
                 p_->data() + powersgd_->pOffset(b), r, 0.f, q_->data() + powersgd_->qOffset(b), r);
  }
  std::vector<float>& second = powersgd_->secondBuffer();
  device_.download(second.data(), q_->data(), second.size());
  if (residual_) keepResidual(grads);
}

void PowerSgdSync::keepResidual(const float* grads) {
  device_.copy(residual_->data(), grads, count_);
  const auto& blocks = powersgd_->blocks();
  for (size_t b = 0; b < blocks.size(); ++b) {
    const MatrixBlock& m = blocks[b];
    const int r = powersgd_->effectiveRank(b);
    // M - P^ Q^T in one product (beta = 1 keeps M): no pass over a copy of P^ Q^T.
    device_.gemm(Trans::kNo, Trans::kYes, m.rows, m.cols, r, -1.f,
                 p_->data() + powersgd_->pOffset(b), r, q_->data() + powersgd_->qOffset(b), r, 1.f,
                 residual_->data() + m.offset, m.cols);
  }
  for (const auto& [begin, end] : powersgd_->rest())
    device_.fill(residual_->data() + begin, end - begin, 0.f);  // x - x
  stepped_ = true;
}

void PowerSgdSync::reconstruct(float* grads) {
  const std::vector<float>& second = powersgd_->secondBuffer();
  device_.upload(q_->data(), second.data(), second.size());  // every Q, summed
  const auto& blocks = powersgd_->blocks();
  for (size_t b = 0; b < blocks.size(); ++b) {
    const MatrixBlock& m = blocks[b];
    const int r = powersgd_->effectiveRank(b);
    device_.gemm(Trans::kNo, Trans::kYes, m.rows, m.cols, r, 1.f,
                 p_->data() + powersgd_->pOffset(b), r, q_->data() + powersgd_->qOffset(b), r, 0.f,
                 grads + m.offset, m.cols);
  }
  const float* rest = powersgd_->firstBuffer().data() + powersgd_->restOffset();
  for (const auto& [begin, end] : powersgd_->rest()) {
    device_.upload(grads + begin, rest, end - begin);
    rest += end - begin;
  }
  powersgd_->finishStep();
}

SyncStats PowerSgdSync::sync(float* grads, size_t count) {
  if (count != count_) start(nullptr, count);
  return timeCompressedAllreduce(comm_, count, [&](SyncStats& stats) {
    auto timed = [&](auto&& phase) {
      const int64_t t = steadyNowNs();
      phase();
      stats.compress_ns += steadyNowNs() - t;
    };
    timed([&] {
      if (residual_) device_.add(grads, residual_->data(), count);
      projectP(grads);
    });
    sum(powersgd_->firstBuffer(), stats);
    timed([&] { projectQ(grads); });
    sum(powersgd_->secondBuffer(), stats);
    timed([&] { reconstruct(grads); });
    // The mean, as the host's sync scales the sum (finiteness is the loss scaler's business).
    const int n = comm_.size();
    if (n > 1) device_.scaleAndCheckFinite(grads, count, 1.f / static_cast<float>(n));
  });
}

CodecState PowerSgdSync::saveCodecState() const {
  CodecState state;
  if (!powersgd_) return state;  // not started: nothing to keep
  powersgd_->saveState(state, "codec.");
  saveDeviceBuffer(state, "residual", device_, residual_.get(), count_, stepped_);
  return state;
}

void PowerSgdSync::restoreCodecState(const CodecState& state) {
  if (!powersgd_) throw std::logic_error("PowerSgdSync: restored before start()");
  powersgd_->restoreState(state, "codec.");
  stepped_ = restoreDeviceBuffer(state, "residual", device_, residual_.get(), count_);
}

size_t PowerSgdSync::bufferBytesHeld() const {
  if (!powersgd_) return 0;
  // The host's: the two summed buffers and the warm start's Q.
  const size_t host = powersgd_->firstFloats() + 2 * powersgd_->secondFloats();
  const size_t device = p_->size() + q_->size() + (residual_ ? count_ : 0);
  return (host + device) * sizeof(float);
}

}  // namespace ranklab
