// The job file's keys, their allowed values (documented in docs/job-file.md), and how each
// is read and written. Ranges are chosen to catch typos, not to forbid experiments.
#include "engine/job/job_schema.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <regex>

#include "comm/codecs/codec_traits.h"
#include "comm/collectives/allreduce_registry.h"
#include "comm/registry.h"
#include "engine/job/control_characters.h"
#include "engine/job/strategy_traits.h"

namespace ranklab::job_detail {

std::string formatDouble(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  if (ec != std::errc()) return std::to_string(value);
  return std::string(buffer, end);
}

std::string allreduceChoices() {
  return joinChoices(allreduceAlgorithms());
}

namespace {

constexpr int64_t kNoUpperLimit = std::numeric_limits<int64_t>::max();

// A double as a TOML float: "1" would read back as an integer, so it becomes "1.0".
std::string tomlDouble(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string text = formatDouble(value);
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

std::string tomlString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string intRangeText(int64_t lo, int64_t hi) {
  if (hi == kNoUpperLimit) return ">= " + std::to_string(lo);
  return std::to_string(lo) + ".." + std::to_string(hi);
}

std::optional<int64_t> readInteger(const toml::node& value, const std::string& path, IssueLog& log,
                                   const std::string& what = "") {
  if (const auto* integer = value.as_integer()) return integer->get();
  log.add(value.source(), path, what + "expected an integer, got " + typeName(value));
  return std::nullopt;
}

bool inIntRange(int64_t v, int64_t lo, int64_t hi, const toml::node& value, const std::string& path,
                IssueLog& log, const std::string& what = "must be ") {
  if (v >= lo && v <= hi) return true;
  log.add(value.source(), path, what + intRangeText(lo, hi) + ", got " + std::to_string(v));
  return false;
}

struct DoubleRange {
  double lo, hi;
  bool lo_open = false, hi_open = false;
  bool contains(double v) const {
    return (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  }
  std::string text() const {
    if (!lo_open && !hi_open) return formatDouble(lo) + ".." + formatDouble(hi);
    return std::string(lo_open ? "> " : ">= ") + formatDouble(lo) + " and " +
           (hi_open ? "< " : "<= ") + formatDouble(hi);
  }
};

// Field factories. `Ref` maps a (const) JobSpec to the member that holds the key's value.

template <class Ref>
Field intField(std::string_view key, Ref ref, int64_t lo, int64_t hi) {
  return {key,
          false,
          [=](const toml::node& value, const std::string& path, JobSpec& job, IssueLog& log) {
            auto v = readInteger(value, path, log);
            if (!v || !inIntRange(*v, lo, hi, value, path, log)) return;
            auto& target = ref(job);
            target = static_cast<std::remove_reference_t<decltype(target)>>(*v);
          },
          [=](const JobSpec& job) { return std::to_string(ref(job)); },
          {},
          intRangeText(lo, hi)};
}

template <class Ref>
Field doubleField(std::string_view key, Ref ref, DoubleRange range) {
  return {key,
          false,
          [=](const toml::node& value, const std::string& path, JobSpec& job, IssueLog& log) {
            double v;
            if (const auto* real = value.as_floating_point()) {
              v = real->get();
            } else if (const auto* integer = value.as_integer()) {
              v = static_cast<double>(integer->get());
            } else {
              log.add(value.source(), path, "expected a number, got " + typeName(value));
              return;
            }
            if (!std::isfinite(v) || !range.contains(v)) {
              log.add(value.source(), path, "must be " + range.text() + ", got " + formatDouble(v));
              return;
            }
            ref(job) = v;
          },
          [=](const JobSpec& job) { return tomlDouble(ref(job)); },
          {},
          range.text()};
}

template <class Ref>
Field boolField(std::string_view key, Ref ref) {
  return {key,
          false,
          [=](const toml::node& value, const std::string& path, JobSpec& job, IssueLog& log) {
            if (const auto* flag = value.as_boolean()) {
              ref(job) = flag->get();
            } else {
              log.add(value.source(), path, "expected true or false, got " + typeName(value));
            }
          },
          [=](const JobSpec& job) { return std::string(ref(job) ? "true" : "false"); },
          {},
          "true or false"};
}

enum class EmptyText { kRejected, kAllowed };

// compression.codec: every codec, from their traits (comm/codecs/codec_traits.h).
std::vector<std::string_view> codecChoices() {
  std::vector<std::string_view> choices;
  for (const auto& t : codecTraits()) choices.push_back(t.name);
  return choices;
}

// parallel.strategy: every strategy, from their traits (engine/job/strategy_traits.h).
std::vector<std::string_view> strategyChoices() {
  std::vector<std::string_view> choices;
  for (const auto& t : strategyTraits()) choices.push_back(t.name);
  return choices;
}

// parallel.algorithm: every registered all-reduce, and shm-sharded (a sharded update of one
// shared model, not an all-reduce: engine/train/shm_sharded_sync.h).
std::vector<std::string_view> algorithmChoices() {
  std::vector<std::string_view> choices(allreduceAlgorithms().begin(), allreduceAlgorithms().end());
  choices.push_back(kSharedModelAlgorithm);
  return choices;
}

// The value's text, or null with the issue logged: not a string, or holding a control
// character (a name or a path with ESC, NUL or a newline in it only ever garbles a terminal).
const std::string* checkedText(const toml::node& value, const std::string& path, IssueLog& log) {
  const auto* text = value.as_string();
  if (!text) {
    log.add(value.source(), path, "expected a string, got " + typeName(value));
    return nullptr;
  }
  if (const auto bad = controlCharacterIn(text->get())) {
    log.add(value.source(), path, "must not contain control characters (" + *bad + ")");
    return nullptr;
  }
  return &text->get();
}

void logNotOneOf(const toml::node& value, const std::string& path, IssueLog& log,
                 const std::vector<std::string_view>& allowed, const std::string& got) {
  log.add(value.source(), path, "must be one of: " + joinNames(allowed) + "; got " + quoted(got));
}

// A string from a fixed set; an empty `allowed` means any string (non-empty unless `empty`
// says it may be, for optional paths).
template <class Ref>
Field stringField(std::string_view key, Ref ref, std::vector<std::string_view> allowed = {},
                  EmptyText empty = EmptyText::kRejected) {
  return {key,
          true,
          [=](const toml::node& value, const std::string& path, JobSpec& job, IssueLog& log) {
            const std::string* v = checkedText(value, path, log);
            if (!v) return;
            if (allowed.empty() && v->empty() && empty == EmptyText::kRejected) {
              log.add(value.source(), path, "must not be empty");
              return;
            }
            if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), *v) == allowed.end())
              return logNotOneOf(value, path, log, allowed, *v);
            ref(job) = *v;
          },
          [=](const JobSpec& job) { return tomlString(ref(job)); },
          allowed,
          !allowed.empty()               ? "one of: " + joinNames(allowed)
          : empty == EmptyText::kAllowed ? "any text, may be empty"
                                         : "any non-empty text"};
}

// One of a typed choice's names (job_choices.h): read into its enumerator, written as its
// name, listed from the choice's own list.
template <class Choice, class Ref>
Field choiceField(std::string_view key, Ref ref) {
  const std::vector<std::string_view> allowed = choiceNames<Choice>();
  return {key,
          true,
          [=](const toml::node& value, const std::string& path, JobSpec& job, IssueLog& log) {
            const std::string* v = checkedText(value, path, log);
            if (!v) return;
            const std::optional<Choice> named = choiceNamed<Choice>(*v);
            if (!named) return logNotOneOf(value, path, log, allowed, *v);
            ref(job) = *named;
          },
          [=](const JobSpec& job) { return tomlString(nameText(ref(job))); },
          allowed,
          "one of: " + joinNames(allowed)};
}

// An array of integers; `entry_meaning` says what one entry is ("one width per hidden layer").
template <class Ref>
Field widthsField(std::string_view key, Ref ref, int64_t min_count, int64_t max_count,
                  int64_t min_width, int64_t max_width, std::string entry_meaning) {
  return {
      key,
      false,
      [=](const toml::node& value, const std::string& path, JobSpec& job, IssueLog& log) {
        const auto* array = value.as_array();
        if (!array) {
          log.add(value.source(), path, "expected an array of integers, got " + typeName(value));
          return;
        }
        const auto count = static_cast<int64_t>(array->size());
        bool ok = true;
        if (count < min_count || count > max_count) {
          log.add(value.source(), path,
                  "must have " + intRangeText(min_count, max_count) + " entries (" + entry_meaning +
                      "), got " + std::to_string(count));
          ok = false;
        }
        std::vector<int> widths;
        for (size_t i = 0; i < array->size(); ++i) {
          const toml::node& entry = *array->get(i);
          const std::string what = "entry " + std::to_string(i + 1);
          auto v = readInteger(entry, path, log, what + ": ");
          if (!v || !inIntRange(*v, min_width, max_width, entry, path, log, what + " must be ")) {
            ok = false;
            continue;
          }
          widths.push_back(static_cast<int>(*v));
        }
        if (ok) ref(job) = widths;
      },
      [=](const JobSpec& job) {
        std::string out = "[";
        for (int width : ref(job)) {
          out += (out.size() > 1 ? ", " : "") + std::to_string(width);
        }
        return out + "]";
      },
      {},
      intRangeText(min_count, max_count) + " entries, each " + intRangeText(min_width, max_width)};
}

// An array of strings, each matching `pattern` (`entry_form` says what that means).
template <class Ref>
Field textListField(std::string_view key, Ref ref, std::string pattern, std::string entry_form) {
  return {key,
          false,
          [=](const toml::node& value, const std::string& path, JobSpec& job, IssueLog& log) {
            const auto* array = value.as_array();
            if (!array) {
              log.add(value.source(), path, "expected an array of strings, got " + typeName(value));
              return;
            }
            const std::regex form(pattern);
            std::vector<std::string> entries;
            for (size_t i = 0; i < array->size(); ++i) {
              const toml::node& entry = *array->get(i);
              const std::string what = "entry " + std::to_string(i + 1);
              const auto* text = entry.as_string();
              if (!text || !std::regex_match(text->get(), form)) {
                log.add(entry.source(), path,
                        what + " must be " + entry_form + ", got " +
                            (text ? quoted(text->get()) : typeName(entry)));
                return;
              }
              entries.push_back(text->get());
            }
            ref(job) = entries;
          },
          [=](const JobSpec& job) {
            std::string out = "[";
            for (const auto& entry : ref(job))
              out += (out.size() > 1 ? ", " : "") + tomlString(entry);
            return out + "]";
          },
          {},
          "an array of strings, each " + entry_form};
}

// A string of the form `pattern` (`form` says what that means in words).
template <class Ref>
Field patternField(std::string_view key, Ref ref, std::string pattern, std::string form) {
  return {key,
          true,
          [=](const toml::node& value, const std::string& path, JobSpec& job, IssueLog& log) {
            const auto* text = value.as_string();
            if (!text || !std::regex_match(text->get(), std::regex(pattern))) {
              log.add(
                  value.source(), path,
                  "must be " + form + ", got " + (text ? quoted(text->get()) : typeName(value)));
              return;
            }
            ref(job) = text->get();
          },
          [=](const JobSpec& job) { return tomlString(ref(job)); },
          {},
          form};
}

// An odd integer 1..11 (a square kernel with same padding).
template <class Ref>
Field oddKernelField(std::string_view key, Ref ref) {
  Field field = intField(key, ref, 1, 11);
  auto read_range = field.read;
  field.read = [=](const toml::node& value, const std::string& path, JobSpec& job, IssueLog& log) {
    const auto* integer = value.as_integer();
    if (integer && integer->get() >= 1 && integer->get() <= 11 && integer->get() % 2 == 0) {
      log.add(value.source(), path,
              "must be odd (1, 3, 5, 7, 9 or 11: same padding keeps the image size), got " +
                  std::to_string(integer->get()));
      return;
    }
    read_range(value, path, job, log);
  };
  field.allowed = "odd, 1..11";
  return field;
}

// Maps a JobSpec (const or not) to one of its members.
#define RANKLAB_JOB_KEY(member) \
  [](auto& job) -> auto& {      \
    return job.member;          \
  }

// [train]: the optimisation loop, its checkpoints and restarts.
Section trainSection() {
  return {"train",
          "the optimisation loop",
          {intField("epochs", RANKLAB_JOB_KEY(train.epochs), 1, 10000),
           intField("batch_size", RANKLAB_JOB_KEY(train.batch_size), 1, 65536),
           intField("accumulate_steps", RANKLAB_JOB_KEY(train.accumulate_steps), 1, 65536),
           choiceField<OptimizerKind>("optimizer", RANKLAB_JOB_KEY(train.optimizer)),
           doubleField("lr", RANKLAB_JOB_KEY(train.lr), {0.0, 10.0, true, false}),
           doubleField("momentum", RANKLAB_JOB_KEY(train.momentum), {0.0, 1.0, false, true}),
           boolField("nesterov", RANKLAB_JOB_KEY(train.nesterov)),
           doubleField("weight_decay", RANKLAB_JOB_KEY(train.weight_decay), {0.0, 1.0}),
           doubleField("beta1", RANKLAB_JOB_KEY(train.beta1), {0.0, 1.0, false, true}),
           doubleField("beta2", RANKLAB_JOB_KEY(train.beta2), {0.0, 1.0, false, true}),
           doubleField("eps", RANKLAB_JOB_KEY(train.eps), {0.0, 1.0, true, false}),
           choiceField<LrScheduleKind>("lr_schedule", RANKLAB_JOB_KEY(train.lr_schedule)),
           intField("lr_step_epochs", RANKLAB_JOB_KEY(train.lr_step_epochs), 1, 10000),
           doubleField("lr_gamma", RANKLAB_JOB_KEY(train.lr_gamma), {0.0, 1.0, true, false}),
           doubleField("lr_min", RANKLAB_JOB_KEY(train.lr_min), {0.0, 10.0}),
           intField("warmup_steps", RANKLAB_JOB_KEY(train.warmup_steps), 0, kNoUpperLimit),
           doubleField("grad_clip", RANKLAB_JOB_KEY(train.grad_clip), {0.0, 1e6}),
           intField("seed", RANKLAB_JOB_KEY(train.seed), 0, kNoUpperLimit),
           intField("max_steps", RANKLAB_JOB_KEY(train.max_steps), 0, kNoUpperLimit),
           intField("eval_every", RANKLAB_JOB_KEY(train.eval_every), 0, kNoUpperLimit),
           intField("eval_batches", RANKLAB_JOB_KEY(train.eval_batches), 0, kNoUpperLimit),
           intField("sample_chars", RANKLAB_JOB_KEY(train.sample_chars), 0, 10000),
           stringField("checkpoint_path", RANKLAB_JOB_KEY(train.checkpoint_path), {},
                       EmptyText::kAllowed),
           intField("checkpoint_every", RANKLAB_JOB_KEY(train.checkpoint_every), 0, kNoUpperLimit),
           stringField("resume_from", RANKLAB_JOB_KEY(train.resume_from), {}, EmptyText::kAllowed),
           intField("max_restarts", RANKLAB_JOB_KEY(train.max_restarts), 0, 100),
           boolField("elastic", RANKLAB_JOB_KEY(train.elastic)),
           patternField("device", RANKLAB_JOB_KEY(train.device), "cpu|cuda|cuda:[0-9]{1,2}",
                        "\"cpu\", \"cuda\" or \"cuda:N\" (N a GPU index, 0..99)"),
           boolField("tf32", RANKLAB_JOB_KEY(train.tf32))}};
}

// The sections from [train] on; buildSchema() adds the top level, [data] and [model].
std::vector<Section> trainingSections() {
  return {
      trainSection(),
      {"parallel",
       "how many ranks and how they combine gradients",
       {intField("ranks", RANKLAB_JOB_KEY(parallel.ranks), 1, kMaxRanks),
        stringField("strategy", RANKLAB_JOB_KEY(parallel.strategy), strategyChoices()),
        stringField("algorithm", RANKLAB_JOB_KEY(parallel.algorithm), algorithmChoices()),
        intField("threads", RANKLAB_JOB_KEY(parallel.threads), 0, 256),
        intField("ranks_per_host", RANKLAB_JOB_KEY(parallel.ranks_per_host), 0, kMaxRanks),
        intField("bucket_kb", RANKLAB_JOB_KEY(parallel.bucket_kb), 0, 1 << 20),
        choiceField<CommSchedule>("comm_schedule", RANKLAB_JOB_KEY(parallel.comm_schedule)),
        intField("partition_kb", RANKLAB_JOB_KEY(parallel.partition_kb), 1, 1 << 20),
        choiceField<DeviceCollectives>("device_collectives",
                                       RANKLAB_JOB_KEY(parallel.device_collectives)),
        intField("credit_kb", RANKLAB_JOB_KEY(parallel.credit_kb), 0, 1 << 20),
        intField("servers", RANKLAB_JOB_KEY(parallel.servers), 1, 64),
        intField("staleness", RANKLAB_JOB_KEY(parallel.staleness), -1, 1000000),
        doubleField("delay_compensation", RANKLAB_JOB_KEY(parallel.delay_compensation),
                    {0.0, 10.0}),
        intField("average_every", RANKLAB_JOB_KEY(parallel.average_every), 1, 1000000),
        intField("microbatches", RANKLAB_JOB_KEY(parallel.microbatches), 1, 65536),
        intField("pipeline", RANKLAB_JOB_KEY(parallel.pipeline), 1, 64),
        choiceField<PipelineOrder>("schedule", RANKLAB_JOB_KEY(parallel.schedule)),
        widthsField("stage_layers", RANKLAB_JOB_KEY(parallel.stage_layers), 0, 64, 1, 65536,
                    "blocks per pipeline stage"),
        intField("tensor", RANKLAB_JOB_KEY(parallel.tensor), 1, 64),
        boolField("sequence_parallel", RANKLAB_JOB_KEY(parallel.sequence_parallel)),
        intField("zero", RANKLAB_JOB_KEY(parallel.zero), 0, 3)}},
      {"compression",
       "how gradients are encoded on the wire",
       {stringField("codec", RANKLAB_JOB_KEY(compression.codec), codecChoices()),
        boolField("error_feedback", RANKLAB_JOB_KEY(compression.error_feedback)),
        intField("bits", RANKLAB_JOB_KEY(compression.bits), 2, 8),
        intField("bucket", RANKLAB_JOB_KEY(compression.bucket), 1, 1 << 24),
        doubleField("ratio", RANKLAB_JOB_KEY(compression.ratio), {0.0, 1.0, true, false}),
        doubleField("threshold", RANKLAB_JOB_KEY(compression.threshold), {0.0, 1e6, true, false}),
        choiceField<ValueDtype>("value_dtype", RANKLAB_JOB_KEY(compression.value_dtype)),
        intField("rank", RANKLAB_JOB_KEY(compression.rank), 1, 64),
        boolField("warm_start", RANKLAB_JOB_KEY(compression.warm_start)),
        boolField("momentum_correction", RANKLAB_JOB_KEY(compression.momentum_correction))}},
      {"amp",
       "the precision of the compute",
       {choiceField<AmpDtype>("dtype", RANKLAB_JOB_KEY(amp.dtype)),
        doubleField("init_scale", RANKLAB_JOB_KEY(amp.init_scale), {0.0, 1e30, true, false}),
        intField("growth_interval", RANKLAB_JOB_KEY(amp.growth_interval), 1, 1000000),
        boolField("head_fp32", RANKLAB_JOB_KEY(amp.head_fp32))}},
      {"fault",
       "injected faults for demos",
       {intField("straggler_rank", RANKLAB_JOB_KEY(fault.straggler_rank), -1, kMaxRanks - 1),
        intField("straggler_delay_ms", RANKLAB_JOB_KEY(fault.straggler_delay_ms), 0, 60000),
        intField("moving_straggler_ms", RANKLAB_JOB_KEY(fault.moving_straggler_ms), 0, 60000)}},
  };
}

// How a run reports, how a live simulation paces itself, and where the ranks run.
std::vector<Section> runSections() {
  return {
      {"telemetry",
       "what ranks report and how they cope with a slow collector",
       {intField("heartbeat_ms", RANKLAB_JOB_KEY(telemetry.heartbeat_ms), 50, 60000),
        intField("spool", RANKLAB_JOB_KEY(telemetry.spool), 16, 1000000),
        intField("silence_limit_s", RANKLAB_JOB_KEY(telemetry.silence_limit_s), 1, 86400),
        intField("hang_limit_s", RANKLAB_JOB_KEY(telemetry.hang_limit_s), 1, 86400),
        intField("span_every", RANKLAB_JOB_KEY(telemetry.span_every), 0, 1000000),
        boolField("encrypt", RANKLAB_JOB_KEY(telemetry.encrypt))}},
      {"simulate",
       "a live simulation's pace (ranklab simulate --live)",
       {doubleField("rate", RANKLAB_JOB_KEY(simulate.rate), {0.0, 1000.0})}},
      {"launch",
       "where the ranks run: this machine, hosts Open MPI places them on, or a Slurm cluster",
       {textListField("hosts", RANKLAB_JOB_KEY(launch.hosts),
                      R"([A-Za-z0-9][A-Za-z0-9._-]*(:[1-9][0-9]{0,3})?)",
                      "\"name\" or \"name:slots\" (slots 1..9999)"),
        stringField("hostfile", RANKLAB_JOB_KEY(launch.hostfile), {}, EmptyText::kAllowed),
        stringField("telemetry_address", RANKLAB_JOB_KEY(launch.telemetry_address), {},
                    EmptyText::kAllowed),
        textListField("mca", RANKLAB_JOB_KEY(launch.mca), R"([a-z0-9_]+=[^\s]+)",
                      "\"name=value\" (an Open MPI MCA parameter, no spaces)"),
        choiceField<Scheduler>("scheduler", RANKLAB_JOB_KEY(launch.scheduler)),
        stringField("partition", RANKLAB_JOB_KEY(launch.partition), {}, EmptyText::kAllowed),
        intField("nodes", RANKLAB_JOB_KEY(launch.nodes), 0, 100000),
        stringField("time_limit", RANKLAB_JOB_KEY(launch.time_limit), {}, EmptyText::kAllowed),
        stringField("account", RANKLAB_JOB_KEY(launch.account), {}, EmptyText::kAllowed),
        textListField("sbatch", RANKLAB_JOB_KEY(launch.sbatch), R"(--[a-z][a-z0-9-]*(=\S+)?)",
                      "\"--option\" or \"--option=value\" (an sbatch option, no spaces)"),
        textListField("command", RANKLAB_JOB_KEY(launch.command), R"(.+)",
                      "a word of the command line (not empty)"),
        choiceField<Launcher>("launcher", RANKLAB_JOB_KEY(launch.launcher))}},
  };
}

std::vector<Section> buildSchema() {
  std::vector<Section> sections = {
      {"", "what the run is called in the run store", {stringField("name", RANKLAB_JOB_KEY(name))}},
      {"data",
       "what to train on",
       {choiceField<DatasetKind>("dataset", RANKLAB_JOB_KEY(data.dataset)),
        stringField("path", RANKLAB_JOB_KEY(data.path)),
        intField("train_limit", RANKLAB_JOB_KEY(data.train_limit), 0, kNoUpperLimit),
        intField("test_limit", RANKLAB_JOB_KEY(data.test_limit), 0, kNoUpperLimit),
        intField("samples", RANKLAB_JOB_KEY(data.samples), 1, 10000000),
        intField("test_samples", RANKLAB_JOB_KEY(data.test_samples), 1, 10000000),
        doubleField("noise", RANKLAB_JOB_KEY(data.noise), {0.0, 10.0}),
        intField("arms", RANKLAB_JOB_KEY(data.arms), 2, 10),
        intField("prefetch", RANKLAB_JOB_KEY(data.prefetch), 0, 64)}},
      {"model",
       "the network",
       {choiceField<ModelKind>("kind", RANKLAB_JOB_KEY(model.kind)),
        widthsField("layers", RANKLAB_JOB_KEY(model.layers), 0, 8, 1, 65536,
                    "one width per hidden layer"),
        widthsField("channels", RANKLAB_JOB_KEY(model.channels), 1, 4, 1, 4096,
                    "one per conv+pool stage"),
        oddKernelField("kernel_size", RANKLAB_JOB_KEY(model.kernel_size)),
        doubleField("dropout", RANKLAB_JOB_KEY(model.dropout), {0.0, 1.0, false, true}),
        intField("blocks", RANKLAB_JOB_KEY(model.blocks), 1, 64),
        intField("heads", RANKLAB_JOB_KEY(model.heads), 1, 64),
        intField("width", RANKLAB_JOB_KEY(model.width), 1, 8192),
        intField("context", RANKLAB_JOB_KEY(model.context), 1, 4096)}},
  };
  for (Section& section : trainingSections()) sections.push_back(std::move(section));
  for (Section& section : runSections()) sections.push_back(std::move(section));
  return sections;
}

#undef RANKLAB_JOB_KEY

}  // namespace

const std::vector<Section>& jobSchema() {
  static const std::vector<Section> schema = buildSchema();
  return schema;
}

const Section* findSection(std::string_view name) {
  for (const auto& section : jobSchema()) {
    if (section.name == name) return &section;
  }
  return nullptr;
}

const Field* findField(const Section& section, std::string_view key) {
  for (const auto& field : section.fields) {
    if (field.key == key) return &field;
  }
  return nullptr;
}

}  // namespace ranklab::job_detail
