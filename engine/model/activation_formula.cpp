#include "engine/model/activation_formula.h"

namespace ranklab {

size_t gptBlockActivationBytes(const GptShape& shape, int batch, int slices,
                               bool sequence_parallel) {
  const size_t h = static_cast<size_t>(shape.width), t = static_cast<size_t>(slices);
  const size_t a = static_cast<size_t>(shape.heads), s = static_cast<size_t>(shape.context);
  if (sequence_parallel && t > 1) {
    const size_t held_rows = static_cast<size_t>(batch) * s / t;
    return sizeof(float) * held_rows * (20 * h + 4 + a * s);
  }
  const size_t dropout = shape.dropout > 0.f ? 4 * h : 0;
  const size_t per_row = 6 * h + 16 * h / t + 4 + a * s / t + dropout;
  return sizeof(float) * static_cast<size_t>(batch) * s * per_row;
}

std::optional<size_t> gptActivationFormula(const std::string& layer, const GptShape& shape,
                                           int batch, int slices, bool sequence_parallel) {
  const size_t rows = static_cast<size_t>(batch) * static_cast<size_t>(shape.context);
  const size_t h = static_cast<size_t>(shape.width), vocab = static_cast<size_t>(shape.vocab);
  if (layer == "embed" || layer == "sp_gather") return sizeof(float) * rows * h;
  if (layer == "sp_scatter") return sizeof(float) * rows / static_cast<size_t>(slices) * h;
  if (layer == "drop") return sizeof(float) * rows * 2 * h;
  if (layer == "ln_f") return sizeof(float) * rows * (h + 2);
  if (layer == "lm_head" || layer == "loss") return sizeof(float) * rows * vocab;
  if (layer.size() > 1 && layer[0] == 'h' &&
      layer.find_first_not_of("0123456789", 1) == std::string::npos)
    return gptBlockActivationBytes(shape, batch, slices, sequence_parallel);
  return std::nullopt;
}

}  // namespace ranklab
