#include "comm/codecs/codec_state.h"

#include <cstring>
#include <stdexcept>

namespace ranklab {

const std::vector<float>& CodecState::tensor(const std::string& key, size_t size) const {
  const auto it = tensors.find(key);
  if (it == tensors.end()) {
    throw std::invalid_argument("no compression state \"" + key + "\"");
  }
  if (size != size_t(-1) && it->second.size() != size) {
    throw std::invalid_argument("compression state \"" + key + "\" holds " +
                                std::to_string(it->second.size()) + " floats, this job needs " +
                                std::to_string(size));
  }
  return it->second;
}

uint64_t CodecState::counter(const std::string& key) const {
  const auto it = counters.find(key);
  if (it == counters.end()) {
    throw std::invalid_argument("no compression state \"" + key + "\"");
  }
  return it->second;
}

namespace {

void put(std::vector<uint8_t>& out, const void* data, size_t size) {
  // resize + memcpy: GCC 12 warns falsely (-Wstringop-overflow) on insert of uint8_t.
  const size_t at = out.size();
  out.resize(at + size);
  if (size > 0) std::memcpy(out.data() + at, data, size);
}

void putText(std::vector<uint8_t>& out, const std::string& text) {
  const uint64_t size = text.size();
  put(out, &size, sizeof size);
  put(out, text.data(), text.size());
}

class ByteReader {
 public:
  explicit ByteReader(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
  void take(void* out, size_t size) {
    expect(size);
    std::memcpy(out, bytes_.data() + at_, size);
    at_ += size;
  }
  // Throws unless `size` more bytes follow.
  void expect(uint64_t size) const {
    if (bytes_.size() - at_ < size) {
      throw std::invalid_argument("compression state bytes cut short at byte " +
                                  std::to_string(at_));
    }
  }
  uint64_t number() {
    uint64_t value = 0;
    take(&value, sizeof value);
    return value;
  }
  std::string text() {
    const uint64_t size = number();
    expect(size);
    std::string value(size, '\0');
    take(value.data(), size);
    return value;
  }

 private:
  const std::vector<uint8_t>& bytes_;
  size_t at_ = 0;
};

}  // namespace

std::vector<uint8_t> toBytes(const CodecState& state) {
  std::vector<uint8_t> out;
  const uint64_t tensors = state.tensors.size(), counters = state.counters.size();
  put(out, &tensors, sizeof tensors);
  for (const auto& [key, values] : state.tensors) {
    putText(out, key);
    const uint64_t size = values.size();
    put(out, &size, sizeof size);
    put(out, values.data(), values.size() * sizeof(float));
  }
  put(out, &counters, sizeof counters);
  for (const auto& [key, value] : state.counters) {
    putText(out, key);
    put(out, &value, sizeof value);
  }
  return out;
}

CodecState codecStateFromBytes(const std::vector<uint8_t>& bytes) {
  ByteReader in(bytes);
  CodecState state;
  for (uint64_t t = in.number(); t > 0; --t) {
    const std::string key = in.text();
    const uint64_t size = in.number();
    if (size > bytes.size() / sizeof(float)) in.expect(bytes.size() + 1);  // throws
    std::vector<float> values(size);
    in.take(values.data(), size * sizeof(float));
    state.tensors[key] = std::move(values);
  }
  for (uint64_t c = in.number(); c > 0; --c) {
    const std::string key = in.text();
    state.counters[key] = in.number();
  }
  return state;
}

}  // namespace ranklab
