// The job file's keys, their allowed values (documented in docs/job-file.md), and how each
// is read and written. Ranges are chosen to catch typos, not to forbid experiments.
#include "engine/job/job_schema.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

namespace ranklab::job_detail {
namespace {

constexpr int64_t kNoUpperLimit = std::numeric_limits<int64_t>::max();

// Shortest text that reads back to exactly `value` (used for messages and for output).
std::string formatDouble(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  if (ec != std::errc()) return std::to_string(value);
  return std::string(buffer, end);
}

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
  return {key, false,
          [=](const toml::node& value, const std::string& path, JobSpec& job, IssueLog& log) {
            auto v = readInteger(value, path, log);
            if (!v || !inIntRange(*v, lo, hi, value, path, log)) return;
            auto& target = ref(job);
            target = static_cast<std::remove_reference_t<decltype(target)>>(*v);
          },
          [=](const JobSpec& job) { return std::to_string(ref(job)); }};
}

template <class Ref>
Field doubleField(std::string_view key, Ref ref, DoubleRange range) {
  return {key, false,
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
          [=](const JobSpec& job) { return tomlDouble(ref(job)); }};
}

// A string from a fixed set; an empty `allowed` means any non-empty string.
template <class Ref>
Field stringField(std::string_view key, Ref ref, std::vector<std::string_view> allowed = {}) {
  return {key, true,
          [=](const toml::node& value, const std::string& path, JobSpec& job, IssueLog& log) {
            const auto* text = value.as_string();
            if (!text) {
              log.add(value.source(), path, "expected a string, got " + typeName(value));
              return;
            }
            const std::string& v = text->get();
            if (allowed.empty() && v.empty()) {
              log.add(value.source(), path, "must not be empty");
              return;
            }
            if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
              log.add(value.source(), path,
                      "must be one of: " + joinNames(allowed) + "; got " + quoted(v));
              return;
            }
            ref(job) = v;
          },
          [=](const JobSpec& job) { return tomlString(ref(job)); }};
}

template <class Ref>
Field widthsField(std::string_view key, Ref ref, int64_t min_count, int64_t max_count,
                  int64_t min_width, int64_t max_width) {
  return {
      key, false,
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
                  "must have " + intRangeText(min_count, max_count) +
                      " entries (one width per hidden layer), got " + std::to_string(count));
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
      }};
}

// Maps a JobSpec (const or not) to one of its members.
#define RANKLAB_JOB_KEY(member) \
  [](auto& job) -> auto& {      \
    return job.member;          \
  }

std::vector<Section> buildSchema() {
  return {
      {"", "what the run is called in the run store", {stringField("name", RANKLAB_JOB_KEY(name))}},
      {"data",
       "what to train on",
       {stringField("dataset", RANKLAB_JOB_KEY(data.dataset), {"fashion-mnist"}),
        stringField("path", RANKLAB_JOB_KEY(data.path)),
        intField("train_limit", RANKLAB_JOB_KEY(data.train_limit), 0, kNoUpperLimit),
        intField("test_limit", RANKLAB_JOB_KEY(data.test_limit), 0, kNoUpperLimit)}},
      {"model",
       "the network",
       {stringField("kind", RANKLAB_JOB_KEY(model.kind), {"mlp"}),
        widthsField("layers", RANKLAB_JOB_KEY(model.layers), 1, 8, 1, 65536)}},
      {"train",
       "the optimisation loop",
       {intField("epochs", RANKLAB_JOB_KEY(train.epochs), 1, 10000),
        intField("batch_size", RANKLAB_JOB_KEY(train.batch_size), 1, 65536),
        doubleField("lr", RANKLAB_JOB_KEY(train.lr), {0.0, 10.0, true, false}),
        doubleField("momentum", RANKLAB_JOB_KEY(train.momentum), {0.0, 1.0, false, true}),
        doubleField("weight_decay", RANKLAB_JOB_KEY(train.weight_decay), {0.0, 1.0}),
        intField("seed", RANKLAB_JOB_KEY(train.seed), 0, kNoUpperLimit),
        intField("max_steps", RANKLAB_JOB_KEY(train.max_steps), 0, kNoUpperLimit)}},
      {"parallel",
       "how many ranks and how they combine gradients",
       {intField("ranks", RANKLAB_JOB_KEY(parallel.ranks), 1, 256),
        stringField("strategy", RANKLAB_JOB_KEY(parallel.strategy), {"allreduce"}),
        stringField("algorithm", RANKLAB_JOB_KEY(parallel.algorithm), {"ring", "mpi"}),
        intField("threads", RANKLAB_JOB_KEY(parallel.threads), 0, 256)}},
      {"compression",
       "how gradients are encoded on the wire",
       {stringField("codec", RANKLAB_JOB_KEY(compression.codec), {"none"})}},
      {"amp",
       "the precision of the compute",
       {stringField("dtype", RANKLAB_JOB_KEY(amp.dtype), {"fp32"})}},
      {"fault",
       "injected faults for demos",
       {intField("straggler_rank", RANKLAB_JOB_KEY(fault.straggler_rank), -1, 255),
        intField("straggler_delay_ms", RANKLAB_JOB_KEY(fault.straggler_delay_ms), 0, 60000)}},
      {"telemetry",
       "what ranks report and how they cope with a slow collector",
       {intField("heartbeat_ms", RANKLAB_JOB_KEY(telemetry.heartbeat_ms), 50, 60000),
        intField("spool", RANKLAB_JOB_KEY(telemetry.spool), 16, 1000000)}},
  };
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

void checkAcrossSections(const toml::table& root, const JobSpec& job, IssueLog& log) {
  // The straggler must be one of the ranks; only meaningful when both keys are valid.
  const std::string ranks_key = "parallel.ranks", straggler_key = "fault.straggler_rank";
  const toml::node* straggler = root["fault"]["straggler_rank"].node();
  if (straggler && !log.hasIssueFor(ranks_key) && !log.hasIssueFor(straggler_key) &&
      job.fault.straggler_rank >= job.parallel.ranks) {
    log.add(straggler->source(), straggler_key,
            "must be -1 (no straggler) or a rank 0.." + std::to_string(job.parallel.ranks - 1) +
                " (parallel.ranks is " + std::to_string(job.parallel.ranks) + "), got " +
                std::to_string(job.fault.straggler_rank));
  }
}

}  // namespace ranklab::job_detail
