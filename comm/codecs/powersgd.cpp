#include "comm/codecs/powersgd.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "comm/codecs/fast_rng.h"

namespace ranklab {

PowerSgd::PowerSgd(std::vector<MatrixBlock> blocks, size_t count, int rank, bool warm_start,
                   uint64_t seed)
    : blocks_(std::move(blocks)), warm_start_(warm_start), seed_(seed) {
  if (rank < 1) throw std::invalid_argument("powersgd: rank must be >= 1");
  std::sort(blocks_.begin(), blocks_.end(),
            [](const MatrixBlock& a, const MatrixBlock& b) { return a.offset < b.offset; });
  size_t p_floats = 0, q_floats = 0, covered = 0;
  for (const auto& b : blocks_) {
    const size_t size = static_cast<size_t>(b.rows) * b.cols;
    if (b.rows < 1 || b.cols < 1 || b.offset < covered || b.offset + size > count) {
      throw std::invalid_argument("powersgd: matrix block at " + std::to_string(b.offset) + " (" +
                                  std::to_string(b.rows) + " x " + std::to_string(b.cols) +
                                  ") overlaps another or leaves the buffer of " +
                                  std::to_string(count));
    }
    if (b.offset > covered) rest_.emplace_back(covered, b.offset);
    covered = b.offset + size;
    ranks_.push_back(std::min({rank, b.rows, b.cols}));
    p_offset_.push_back(p_floats);
    q_offset_.push_back(q_floats);
    p_floats += static_cast<size_t>(b.rows) * ranks_.back();
    q_floats += static_cast<size_t>(b.cols) * ranks_.back();
  }
  if (covered < count) rest_.emplace_back(covered, count);
  rest_offset_ = p_floats;
  size_t rest_floats = 0;
  for (const auto& [begin, end] : rest_) rest_floats += end - begin;
  first_.resize(p_floats + rest_floats);
  second_.resize(q_floats);
  q_.resize(q_floats);
  for (size_t b = 0; b < blocks_.size(); ++b) drawQ(b);
}

void PowerSgd::saveState(CodecState& state, const std::string& prefix) const {
  state.counters[prefix + "step"] = step_;
  state.tensors[prefix + "q"] = q_;
}

void PowerSgd::restoreState(const CodecState& state, const std::string& prefix) {
  step_ = state.counter(prefix + "step");
  q_ = state.tensor(prefix + "q", q_.size());
}

void PowerSgd::drawQ(size_t block) {
  // Standard normal entries (Box-Muller) from a stream every rank shares.
  FastRng rng(mixSeed(seed_, step_, block));
  float* q = q_.data() + q_offset_[block];
  const size_t n = static_cast<size_t>(blocks_[block].cols) * ranks_[block];
  for (size_t i = 0; i < n; ++i) {
    const float u1 = std::max(rng.uniform(), 0x1.0p-24f), u2 = rng.uniform();
    q[i] = std::sqrt(-2.f * std::log(u1)) * std::cos(6.2831853f * u2);
  }
}

const std::vector<float>& PowerSgd::prepareQ() {
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const int r = ranks_[b], cols = blocks_[b].cols;
    const float* q = q_.data() + q_offset_[b];
    // A zero column would stay zero forever under warm start: draw afresh instead.
    bool degenerate = !warm_start_ || step_ == 0;
    for (int j = 0; j < r && !degenerate; ++j) {
      double norm = 0;
      for (int i = 0; i < cols; ++i) norm += double(q[i * r + j]) * q[i * r + j];
      degenerate = norm < 1e-30;
    }
    if (degenerate && step_ > 0) drawQ(b);
  }
  return q_;
}

namespace {
// Modified Gram-Schmidt on the r columns of a row-major (rows, r) matrix; a column that is
// (numerically) in the span of the earlier ones becomes zero.
void orthonormalizeColumns(float* p, int rows, int r) {
  for (int j = 0; j < r; ++j) {
    for (int i = 0; i < j; ++i) {
      double dot = 0;
      for (int k = 0; k < rows; ++k) dot += double(p[k * r + i]) * p[k * r + j];
      for (int k = 0; k < rows; ++k) p[k * r + j] -= static_cast<float>(dot) * p[k * r + i];
    }
    double norm = 0;
    for (int k = 0; k < rows; ++k) norm += double(p[k * r + j]) * p[k * r + j];
    const float scale = norm > 1e-30 ? static_cast<float>(1.0 / std::sqrt(norm)) : 0.f;
    for (int k = 0; k < rows; ++k) p[k * r + j] *= scale;
  }
}
}  // namespace

void PowerSgd::orthonormalizeP() {
  for (size_t b = 0; b < blocks_.size(); ++b)
    orthonormalizeColumns(first_.data() + p_offset_[b], blocks_[b].rows, ranks_[b]);
}

void PowerSgd::finishStep() {
  if (warm_start_) q_ = second_;
  ++step_;
}

}  // namespace ranklab
