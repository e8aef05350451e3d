#include "comm/codecs/wire_format.h"

#include <algorithm>

namespace ranklab::wire {

void packBits(const uint32_t* values, size_t count, int bits, std::vector<uint8_t>& out) {
  const size_t start = out.size();
  out.resize(start + packedBytes(count, bits), 0);
  if (bits == 0) return;
  uint8_t* dst = out.data() + start;
  const uint64_t mask = bits == 32 ? 0xffffffffull : (1ull << bits) - 1;
  // A 64-bit accumulator: whole bytes leave as soon as 8 bits are pending.
  uint64_t acc = 0;
  int pending = 0;
  for (size_t i = 0; i < count; ++i) {
    acc |= (values[i] & mask) << pending;
    pending += bits;
    while (pending >= 8) {
      *dst++ = static_cast<uint8_t>(acc);
      acc >>= 8;
      pending -= 8;
    }
  }
  if (pending > 0) *dst = static_cast<uint8_t>(acc);
}

void unpackBits(const uint8_t* in, size_t count, int bits, uint32_t* values) {
  if (bits == 0) {
    std::fill(values, values + count, 0u);
    return;
  }
  const uint64_t mask = bits == 32 ? 0xffffffffull : (1ull << bits) - 1;
  uint64_t acc = 0;
  int available = 0;
  for (size_t i = 0; i < count; ++i) {
    while (available < bits) {
      acc |= static_cast<uint64_t>(*in++) << available;
      available += 8;
    }
    values[i] = static_cast<uint32_t>(acc & mask);
    acc >>= bits;
    available -= bits;
  }
}

int bitWidth(uint32_t value) {
  return value == 0 ? 0 : 32 - __builtin_clz(value);
}

void badPayload(const char* codec, const std::string& why) {
  throw std::runtime_error(std::string(codec) + " payload: " + why);
}

}  // namespace ranklab::wire
