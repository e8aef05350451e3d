#include "engine/train/activation_ledger.h"

#include "engine/model/activation_formula.h"
#include "engine/model/models.h"

namespace ranklab {

std::string activationsEventText(const std::vector<LayerMemory>& layers, const JobSpec& job,
                                 int vocab, int copies) {
  const int micro = job.train.batch_size / std::max(1, job.parallel.microbatches);
  std::string text = "per layer at micro-batch " + std::to_string(micro) + " x " +
                     std::to_string(copies) + (copies == 1 ? " copy" : " copies") +
                     " (bytes kept for backward, formula, backward workspace): ";
  const GptShape shape = gptShapeOf(job.model, vocab);
  for (size_t l = 0; l < layers.size(); ++l) {
    const LayerMemory& layer = layers[l];
    std::optional<size_t> formula;
    if (job.model.kind == ModelKind::kGpt)
      formula = gptActivationFormula(layer.layer, shape, micro, job.parallel.tensor,
                                     job.parallel.sequence_parallel);
    text += (l == 0 ? "" : "; ") + layer.layer + " " + std::to_string(layer.activations) + " " +
            (formula ? std::to_string(*formula * static_cast<size_t>(copies)) : "-") + " " +
            std::to_string(layer.workspace);
  }
  return text;
}

}  // namespace ranklab
