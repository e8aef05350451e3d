// The memory ledger per layer, read back from a rank's "activations" event (written by
// engine/train/activation_ledger.h): each layer's bytes kept for backward, the formula's
// where there is one, and its backward workspace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ranklab {

struct LayerActivations {
  std::string layer;               // "h0", "loss"
  int64_t bytes = 0;               // kept for backward: its output and its own state
  std::optional<int64_t> formula;  // a GPT's layers': the bytes by formula
  int64_t workspace = 0;           // its output's gradient and its backward's buffers
};

// The layers of an event's text, in model order; empty for text of another form.
std::vector<LayerActivations> parseActivationsEvent(const std::string& text);

// Whether two ranks hold the same part of the model (data replicas, a stage's slices): the
// same layers keeping the same bytes. Views draw such ranks as one.
bool sameLedger(const std::vector<LayerActivations>& a, const std::vector<LayerActivations>& b);

}  // namespace ranklab
