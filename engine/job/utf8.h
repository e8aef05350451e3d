// UTF-8 as RFC 3629 defines it: what text data (engine/data/text_dataset.h) accepts and what a
// model's text (engine/model/text_sampler.h) keeps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ranklab {

// The length of the well-formed UTF-8 sequence at bytes[i] (of `size`): 1 to 4, or 0 where
// none starts (a stray continuation byte, an overlong form, a surrogate, a code point past
// U+10FFFF, or a sequence cut short).
size_t utf8SequenceAt(const uint8_t* bytes, size_t size, size_t i);

// "\xff at offset 3" for the first byte of `text` that starts no well-formed sequence.
std::optional<std::string> byteNotUtf8In(const std::string& text);

// `text` with each byte that is not part of well-formed UTF-8 written as the four characters
// \xNN: a name from a file's bytes made fit for JSON, and readable, without losing a byte.
std::string withBytesNotUtf8Escaped(const std::string& text);

}  // namespace ranklab
