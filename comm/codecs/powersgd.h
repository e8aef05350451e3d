// PowerSGD (Vogels et al. 2019): each weight matrix M (rows, cols) is sent as a rank-r
// product P Q^T found by one step of power iteration, with two all-reduces of small
// dense matrices, because P Q^T is linear in M. Per matrix and step:
//   P = M Q             (rows, r)  all-reduce P (sum)      -- with the uncompressed rest
//   P^ = orthonormal(P)            Q = M^T P^  (cols, r)   -- local
//   all-reduce Q (sum)             result = P^ Q_sum^T     -- the sum of every rank's P^ Q^T
// Q starts from a random matrix drawn from a seed every rank shares; with warm start the
// next step starts from this step's Q_sum. Everything outside the matrix blocks (biases)
// travels uncompressed inside the first all-reduce.
// Bound: per matrix ||P^ Q^T - M||_F <= ||M||_F (a projection), and a matrix of rank <= r
// is reproduced exactly. With error feedback the residual is M - P^ Q^T, this rank's part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "comm/codecs/codec.h"

namespace ranklab {

class PowerSgd {
 public:
  // blocks: disjoint matrices inside a buffer of `count` floats.
  PowerSgd(std::vector<MatrixBlock> blocks, size_t count, int rank, bool warm_start, uint64_t seed);

  // One compressed all-reduce, run by engine/train/powersgd_sync.h where the gradient is,
  // needs these host-side parts: before P = M Q, the Q this step starts from (drawn afresh
  // where warm start cannot continue); after the first sum, P orthonormalised in the first
  // buffer (every P, then the uncompressed rest); after the reconstruction from the second
  // (every Q, summed), the warm start's Q kept and the step counted.
  const std::vector<float>& prepareQ();
  void orthonormalizeP();
  void finishStep();
  std::vector<float>& firstBuffer() { return first_; }
  std::vector<float>& secondBuffer() { return second_; }
  // The blocks by offset; where block b's P and Q sit in the buffers; the uncompressed
  // [begin, end) ranges, in order from restOffset() in the first buffer.
  const std::vector<MatrixBlock>& blocks() const { return blocks_; }
  size_t pOffset(size_t block) const { return p_offset_[block]; }
  size_t qOffset(size_t block) const { return q_offset_[block]; }
  const std::vector<std::pair<size_t, size_t>>& rest() const { return rest_; }
  size_t restOffset() const { return rest_offset_; }

  // Floats in the two all-reduces, for bytes accounting and tests.
  size_t firstFloats() const { return first_.size(); }
  size_t secondFloats() const { return second_.size(); }
  int effectiveRank(size_t block) const { return ranks_[block]; }

  // Checkpoints: the step count (fresh draws of Q come from it) and the warm-start Q.
  void saveState(CodecState& state, const std::string& prefix) const;
  // Throws std::invalid_argument naming the key when it is missing or of another size.
  void restoreState(const CodecState& state, const std::string& prefix);

 private:
  void drawQ(size_t block);

  std::vector<MatrixBlock> blocks_;
  std::vector<int> ranks_;                       // r per block, at most min(rows, cols)
  std::vector<size_t> p_offset_, q_offset_;      // where each block's P / Q sit in first_ / second_
  std::vector<std::pair<size_t, size_t>> rest_;  // [begin, end) ranges sent uncompressed
  size_t rest_offset_ = 0;                       // where the rest starts in first_
  bool warm_start_;
  uint64_t seed_;
  uint64_t step_ = 0;
  std::vector<float> q_;       // current Q per block (cols, r), at q_offset_
  std::vector<float> first_;   // all-reduced: every P, then the rest
  std::vector<float> second_;  // all-reduced: every Q
};

}  // namespace ranklab
