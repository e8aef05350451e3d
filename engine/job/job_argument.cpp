#include "engine/job/job_argument.h"

#include <array>

#include "engine/job/job_file.h"

namespace ranklab {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kArgumentName[] = "--job-text";

std::string toBase64(const std::string& bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) group |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) group |= static_cast<uint8_t>(bytes[i + 2]);
    const size_t left = bytes.size() - i;
    out += kAlphabet[(group >> 18) & 63];
    out += kAlphabet[(group >> 12) & 63];
    out += left > 1 ? kAlphabet[(group >> 6) & 63] : '=';
    out += left > 2 ? kAlphabet[group & 63] : '=';
  }
  return out;
}

std::string fromBase64(const std::string& text) {
  std::array<int, 256> value;
  value.fill(-1);
  for (int i = 0; i < 64; ++i) value[static_cast<uint8_t>(kAlphabet[i])] = i;
  if (text.size() % 4 != 0) throw JobError({{kArgumentName, 0, 0, "", "is not base64 (length)"}});
  std::string out;
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t group = 0;
    int pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      const int v = c == '=' && k >= 2 ? (++pad, 0) : value[static_cast<uint8_t>(c)];
      if (v < 0) throw JobError({{kArgumentName, 0, 0, "", "is not base64"}});
      group = group << 6 | static_cast<uint32_t>(v);
    }
    out += static_cast<char>(group >> 16);
    if (pad < 2) out += static_cast<char>((group >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(group & 0xff);
  }
  return out;
}

}  // namespace

std::string jobArgument(const JobSpec& job) {
  return toBase64(toTomlText(job));
}

JobSpec parseJobArgument(const std::string& word) {
  return parseJob(fromBase64(word), kArgumentName);
}

}  // namespace ranklab
