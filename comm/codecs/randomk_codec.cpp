#include "comm/codecs/randomk_codec.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "comm/codecs/fast_rng.h"
#include "comm/codecs/wire_format.h"

namespace ranklab {

RandomkCodec::RandomkCodec(double ratio, uint64_t seed) : ratio_(ratio), seed_(seed) {
  if (!(ratio > 0 && ratio <= 1)) throw std::invalid_argument("randomk: ratio must be in (0, 1]");
}

size_t RandomkCodec::keptCount(size_t n) const {
  if (n == 0) return 0;
  const auto k = static_cast<size_t>(std::ceil(ratio_ * static_cast<double>(n)));
  return std::clamp<size_t>(k, 1, n);
}

void RandomkCodec::drawIndices(size_t n) {
  const size_t k = keptCount(n);
  // Floyd's algorithm: k distinct indices in k draws, whatever k / n is.
  FastRng rng(mixSeed(seed_, step_++));
  taken_.assign(n, 0);
  indices_.clear();
  for (size_t j = n - k; j < n; ++j) {
    auto t = rng.below(static_cast<uint32_t>(j + 1));
    if (taken_[t]) t = static_cast<uint32_t>(j);
    taken_[t] = 1;
  }
  // A scan of the marks lists them in increasing order, cheaper than sorting the draws.
  for (size_t i = 0; i < n; ++i) {
    if (taken_[i]) indices_.push_back(static_cast<uint32_t>(i));
  }
  drawn_for_ = n;
}

void RandomkCodec::encode(const float* x, size_t n, std::vector<uint8_t>& out) {
  drawIndices(n);
  const size_t k = indices_.size();
  out.resize(k * sizeof(float));
  auto* values = reinterpret_cast<float*>(out.data());
  for (size_t i = 0; i < k; ++i) values[i] = x[indices_[i]];
}

void RandomkCodec::decode(const uint8_t* payload, size_t bytes, size_t n, float* out,
                          DecodeMode mode) {
  if (n != drawn_for_ || bytes != indices_.size() * sizeof(float)) {
    wire::badPayload("randomk", std::to_string(bytes) + " bytes for " + std::to_string(n) +
                                    " elements; the last encode drew " +
                                    std::to_string(indices_.size()) + " of " +
                                    std::to_string(drawn_for_));
  }
  if (mode == DecodeMode::kAssign) std::fill(out, out + n, 0.f);
  for (size_t i = 0; i < indices_.size(); ++i) {
    float v;
    std::memcpy(&v, payload + i * sizeof(float), sizeof v);
    out[indices_[i]] += v;
  }
}

}  // namespace ranklab
