// The sign codec's encode (comm/codecs/sign_codec.h), as a device that encodes on its own
// side must do it too: per bucket of `bucket` elements the mean |x| (summed in double as
// four interleaved partial sums, (p0 + p1) + (p2 + p3): the order every device keeps), then
// one sign bit per element (1 = negative), LSB-first.
// Payload: ceil(n/bucket) f32 scales, then ceil(n/8) bytes of bits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ranklab::kernels {

size_t signPayloadBytes(size_t n, size_t bucket);
// Writes the whole payload (signPayloadBytes(n, bucket) bytes).
void signEncode(const float* x, size_t n, size_t bucket, uint8_t* payload);
// residual[i] = x[i] - (its decoded value: +-the bucket's scale): what error feedback keeps.
void signLeftOver(const float* x, size_t n, size_t bucket, const uint8_t* payload, float* residual);

}  // namespace ranklab::kernels
