// The job's fixed choices as types: each key's names listed once (X(enumerator, name)), so
// code compares enumerators, a switch that misses one fails to build (-Wswitch), and the
// schema reads, writes and lists exactly these names (job_schema.cpp's choiceField).
// Choices that registries own (parallel.strategy, parallel.algorithm, compression.codec)
// stay names, resolved through their registries.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ranklab {

#define RANKLAB_MODEL_KINDS(X) X(kMlp, "mlp") X(kCnn, "cnn") X(kGpt, "gpt")
#define RANKLAB_DATASET_KINDS(X) \
  X(kFashionMnist, "fashion-mnist") X(kSpirals, "spirals") X(kMoons, "moons") X(kText, "text")
#define RANKLAB_AMP_DTYPES(X) X(kFp32, "fp32") X(kBf16, "bf16") X(kFp16, "fp16")
#define RANKLAB_OPTIMIZER_KINDS(X) X(kSgd, "sgd") X(kAdam, "adam") X(kAdamW, "adamw")
#define RANKLAB_LR_SCHEDULES(X) X(kConstant, "constant") X(kStep, "step") X(kCosine, "cosine")
#define RANKLAB_DEVICE_COLLECTIVES(X) X(kAuto, "auto") X(kNccl, "nccl") X(kHost, "host")
#define RANKLAB_COMM_SCHEDULES(X) X(kFifo, "fifo") X(kPriority, "priority")
#define RANKLAB_SCHEDULERS(X) X(kLocal, "local") X(kSlurm, "slurm")
#define RANKLAB_PIPELINE_ORDERS(X) X(kGpipe, "gpipe") X(k1F1B, "1f1b")
#define RANKLAB_VALUE_DTYPES(X) X(kFp32, "fp32") X(kFp16, "fp16")
#define RANKLAB_LAUNCHERS(X) \
  X(kRanklab, "ranklab") X(kMpirun, "mpirun") X(kTorchrun, "torchrun") X(kCommand, "command")
#define RANKLAB_FAULT_ACTIONS(X) X(kKill, "kill") X(kStop, "stop") X(kSlow, "slow") X(kExit, "exit")

// Each choice's names, in the list's order (the order the schema shows them in).
template <class Choice>
struct ChoiceList;

#define RANKLAB_CHOICE_ENUMERATOR(enumerator, name) enumerator,
#define RANKLAB_CHOICE_ENTRY(enumerator, name) std::pair<E, std::string_view>{E::enumerator, name},
#define RANKLAB_CHOICE(Choice, LIST)                                                          \
  enum class Choice { LIST(RANKLAB_CHOICE_ENUMERATOR) };                                      \
  template <>                                                                                 \
  struct ChoiceList<Choice> {                                                                 \
    using E = Choice;                                                                         \
    static constexpr std::pair<E, std::string_view> entries[] = {LIST(RANKLAB_CHOICE_ENTRY)}; \
  };

RANKLAB_CHOICE(ModelKind, RANKLAB_MODEL_KINDS)
RANKLAB_CHOICE(DatasetKind, RANKLAB_DATASET_KINDS)
RANKLAB_CHOICE(AmpDtype, RANKLAB_AMP_DTYPES)
RANKLAB_CHOICE(OptimizerKind, RANKLAB_OPTIMIZER_KINDS)
RANKLAB_CHOICE(LrScheduleKind, RANKLAB_LR_SCHEDULES)
RANKLAB_CHOICE(DeviceCollectives, RANKLAB_DEVICE_COLLECTIVES)
RANKLAB_CHOICE(CommSchedule, RANKLAB_COMM_SCHEDULES)
RANKLAB_CHOICE(Scheduler, RANKLAB_SCHEDULERS)
RANKLAB_CHOICE(PipelineOrder, RANKLAB_PIPELINE_ORDERS)
RANKLAB_CHOICE(ValueDtype, RANKLAB_VALUE_DTYPES)
RANKLAB_CHOICE(Launcher, RANKLAB_LAUNCHERS)
RANKLAB_CHOICE(FaultAction, RANKLAB_FAULT_ACTIONS)

#undef RANKLAB_CHOICE
#undef RANKLAB_CHOICE_ENTRY
#undef RANKLAB_CHOICE_ENUMERATOR

// "gpt" for ModelKind::kGpt; "?" for a value outside the list.
template <class Choice>
constexpr std::string_view nameOf(Choice choice) {
  for (const auto& [value, name] : ChoiceList<Choice>::entries)
    if (value == choice) return name;
  return "?";
}

// nameOf() as a std::string, for messages.
template <class Choice>
std::string nameText(Choice choice) {
  return std::string(nameOf(choice));
}

// The choice called `name`; nullopt for a name outside the list (a stored run's text, a
// form's field).
template <class Choice>
constexpr std::optional<Choice> choiceNamed(std::string_view name) {
  for (const auto& [value, text] : ChoiceList<Choice>::entries)
    if (text == name) return value;
  return std::nullopt;
}

template <class Choice>
std::vector<std::string_view> choiceNames() {
  std::vector<std::string_view> names;
  for (const auto& entry : ChoiceList<Choice>::entries) names.push_back(entry.second);
  return names;
}

// choiceNamed(), or std::invalid_argument naming `name` and the allowed ones.
template <class Choice>
Choice choiceFrom(std::string_view name) {
  if (const std::optional<Choice> choice = choiceNamed<Choice>(name)) return *choice;
  std::string allowed;
  for (std::string_view n : choiceNames<Choice>())
    allowed += (allowed.empty() ? "" : ", ") + std::string(n);
  throw std::invalid_argument("\"" + std::string(name) + "\" is not one of: " + allowed);
}

}  // namespace ranklab
