// Building blocks of the codecs' payloads: little-endian scalars and arrays, and bit
// packing of fixed-width fields. Readers check every length against the payload so a
// short or corrupt payload throws instead of reading past its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace ranklab::wire {

// Bytes taken by `count` fields of `bits` bits each, packed without gaps.
inline size_t packedBytes(size_t count, int bits) {
  return (count * static_cast<size_t>(bits) + 7) / 8;
}

// Appends `count` values of `bits` bits (0..32, low bits of each value) LSB-first.
void packBits(const uint32_t* values, size_t count, int bits, std::vector<uint8_t>& out);
// Reads `count` fields of `bits` bits from `in` (packedBytes(count, bits) bytes).
void unpackBits(const uint8_t* in, size_t count, int bits, uint32_t* values);

// Bits needed to hold `value` (0 for 0).
int bitWidth(uint32_t value);

template <class T>
void append(std::vector<uint8_t>& out, const T* values, size_t count) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(values);
  out.insert(out.end(), bytes, bytes + count * sizeof(T));
}

template <class T>
void append(std::vector<uint8_t>& out, T value) {
  append(out, &value, 1);
}

// Walks a payload front to back; every take checks the remaining length.
class PayloadReader {
 public:
  PayloadReader(const uint8_t* data, size_t bytes, const char* codec)
      : data_(data), bytes_(bytes), codec_(codec) {}

  const uint8_t* take(size_t bytes, const char* what) {
    if (bytes > bytes_ - pos_) {
      throw std::runtime_error(std::string(codec_) + " payload: " + what + " needs " +
                               std::to_string(bytes) + " bytes at offset " + std::to_string(pos_) +
                               ", payload has " + std::to_string(bytes_));
    }
    const uint8_t* p = data_ + pos_;
    pos_ += bytes;
    return p;
  }

  template <class T>
  T scalar(const char* what) {
    T value;
    std::memcpy(&value, take(sizeof(T), what), sizeof(T));
    return value;
  }

  // Throws if bytes are left over: a payload must be exactly its format's size.
  void expectEnd() const {
    if (pos_ != bytes_) {
      throw std::runtime_error(std::string(codec_) + " payload: " + std::to_string(bytes_ - pos_) +
                               " trailing bytes after " + std::to_string(pos_));
    }
  }

 private:
  const uint8_t* data_;
  size_t bytes_;
  const char* codec_;
  size_t pos_ = 0;
};

// Throws a payload error naming the codec.
[[noreturn]] void badPayload(const char* codec, const std::string& why);

}  // namespace ranklab::wire
