// QSGD's quantization (comm/codecs/qsgd_codec.h), as a device that encodes on its own side
// must do it too: per bucket of `bucket` elements the scale, its largest |x| (NaNs
// ignored), then per element a code sign << (bits - 1) | level, level in 0..s with
// s = 2^(bits-1) - 1, |x| / scale * s rounded up with probability equal to the remainder.
// The coin of element i of bucket b is 16 bits of draw b * ceil(bucket / 4) + (i - b *
// bucket) / 4 of the stream (four coins per draw, lowest bits first; kernels/splitmix.h),
// or 0.5 when rounding to nearest.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/host_device.h"

namespace ranklab::kernels {

struct QsgdRounding {
  bool nearest = false;  // to the nearest level (error feedback's own gradient); no draws
  uint64_t stream = 0;   // else the SplitMix64 state the draws start from
};

// The draws a stochastic quantization of n elements takes from its stream.
uint64_t qsgdDraws(size_t n, size_t bucket);
// scales: ceil(n / bucket) floats; codes: n.
void qsgdQuantize(const float* x, size_t n, int bits, size_t bucket, QsgdRounding rounding,
                  float* scales, uint32_t* codes);
// A code's decoded value per unit of scale: +-level / s (the GPU's too).
RANKLAB_HOST_DEVICE inline float qsgdUnit(uint32_t code, int bits) {
  const uint32_t sign_bit = 1u << (bits - 1);
  const float level = static_cast<float>(code & (sign_bit - 1)) / static_cast<float>(sign_bit - 1);
  return code & sign_bit ? -level : level;
}
// residual[i] = x[i] - codes[i]'s decoded value: what error feedback keeps.
void qsgdLeftOver(const float* x, size_t n, int bits, size_t bucket, const float* scales,
                  const uint32_t* codes, float* residual);

}  // namespace ranklab::kernels
