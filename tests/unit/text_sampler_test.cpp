// A GPT's text: the same for the same model and seed, drawn from what the model predicts,
// and always printable UTF-8 whatever bytes it draws.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/model/models.h"
#include "engine/model/text_sampler.h"
#include "engine/model/transformer_block.h"

namespace ranklab {
namespace {

TEST(TextSampler, TheSameModelAndSeedWriteTheSameText) {
  Network model = makeGpt({256, 8, 16, 2, 1, 0.f}, 3);
  const std::string a = sampleText(model, "\n", 40, 7), b = sampleText(model, "\n", 40, 7);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 41u);  // the prompt and 40 bytes, each itself or a "?"
  EXPECT_EQ(a.front(), '\n');
  EXPECT_NE(sampleText(model, "\n", 40, 8), a);
  EXPECT_EQ(printableUtf8(a), a);
}

// A model whose head favours one byte writes that byte: the draw follows the logits, and a
// prompt longer than the context is read through its last window.
TEST(TextSampler, ItWritesWhatTheModelPredicts) {
  Network model = makeGpt({256, 4, 8, 2, 1, 0.f}, 5);
  // The tied head's logits are x . token_table^T: a huge table row for 'e' wins everywhere
  // its dot product with the final LayerNorm's output is positive, so make that output
  // positive too (ln_f's bias) and the row's entries positive.
  const auto& views = model.views();
  for (const ParamView& v : views) {
    if (v.name == "embed.token")
      for (size_t i = 0; i < 8; ++i) model.params()[v.offset + 'e' * 8 + i] = 50.f;
    if (v.name == "ln_f.bias")
      for (size_t i = 0; i < v.size; ++i) model.params()[v.offset + i] = 3.f;
    if (v.name == "ln_f.weight") std::memset(model.params() + v.offset, 0, v.size * sizeof(float));
  }
  EXPECT_EQ(sampleText(model, "a long prompt", 5, 1), "a long prompteeeee");
}

TEST(TextSampler, BytesThatAreNotPrintableUtf8BecomeQuestionMarks) {
  EXPECT_EQ(printableUtf8("caf\xc3\xa9\n\ttab"), "caf\xc3\xa9\n\ttab");
  EXPECT_EQ(printableUtf8("a\x1b[31mb"), "a?[31mb");  // an escape sequence's ESC
  EXPECT_EQ(printableUtf8("x\xc3"), "x?");            // cut short
  EXPECT_EQ(printableUtf8("\xff\xfe"), "??");
  EXPECT_EQ(printableUtf8(std::string("a\0b", 3)), "a?b");
}

}  // namespace
}  // namespace ranklab
