// [[faults]]: an array of tables, each a fault one rank injects into its own run after it
// reported a step (docs/job-file.md). Read, checked and written here; executed by the
// worker (app/worker/fault_injector.h).
#include <algorithm>
#include <string>
#include <vector>

#include "engine/job/job_schema.h"

namespace ranklab::job_detail {
namespace {

const std::vector<std::string_view> kActions = choiceNames<FaultAction>();
const std::vector<std::string_view> kKeys = {"rank", "at_step", "action",
                                             "ms",   "seconds", "attempt"};

// An integer in lo..hi, or an issue naming path and the range.
bool readInt(const toml::node& value, const std::string& path, int64_t lo, int64_t hi, int64_t& out,
             IssueLog& log) {
  const auto* integer = value.as_integer();
  if (!integer) {
    log.add(value.source(), path, "expected an integer, got " + typeName(value));
    return false;
  }
  if (integer->get() < lo || integer->get() > hi) {
    log.add(value.source(), path,
            "must be " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
                std::to_string(integer->get()));
    return false;
  }
  out = integer->get();
  return true;
}

void readKey(std::string_view key, const toml::node& value, const std::string& path,
             InjectedFault& fault, IssueLog& log) {
  int64_t v = 0;
  if (key == "rank" && readInt(value, path, 0, kMaxRanks - 1, v, log))
    fault.rank = static_cast<int>(v);
  if (key == "at_step" && readInt(value, path, 0, int64_t{1} << 40, v, log)) fault.at_step = v;
  if (key == "ms" && readInt(value, path, 1, 600'000, v, log)) fault.ms = static_cast<int>(v);
  if (key == "seconds" && readInt(value, path, 0, 86'400, v, log))
    fault.seconds = static_cast<int>(v);
  if (key == "attempt" && readInt(value, path, 0, 100, v, log)) fault.attempt = static_cast<int>(v);
  if (key != "action") return;
  const auto* text = value.as_string();
  if (!text) {
    log.add(value.source(), path, "expected a string, got " + typeName(value));
  } else if (const std::optional<FaultAction> action = choiceNamed<FaultAction>(text->get())) {
    fault.action = *action;
  } else {
    log.add(value.source(), path,
            "must be one of " + joinNames(kActions) + ", got " + quoted(text->get()));
  }
}

// One [[faults]] table (one without an action, or with a bad one, is reported).
InjectedFault readFault(const toml::table& table, const std::string& prefix, IssueLog& log) {
  InjectedFault fault;
  for (auto&& [key, value] : table) {
    const std::string path = prefix + "." + std::string(key.str());
    if (std::find(kKeys.begin(), kKeys.end(), key.str()) == kKeys.end()) {
      log.add(
          key.source(), path,
          "unknown key " + quoted(key.str()) + " in [[faults]]; allowed keys: " + joinNames(kKeys));
      continue;
    }
    readKey(key.str(), value, path, fault, log);
  }
  if (!table.contains("action")) {
    log.add(table.source(), prefix + ".action",
            "every [[faults]] table needs an action: one of " + joinNames(kActions));
  }
  const bool slow = fault.action == FaultAction::kSlow;
  if (slow && fault.ms == 0) {
    log.add(table.source(), prefix + ".ms", "action = \"slow\" needs ms, the extra ms per step");
  }
  if (!slow && table.contains("ms")) {
    log.add(table.source(), prefix + ".ms", "applies to action = \"slow\" only");
  }
  if (fault.action != FaultAction::kStop && table.contains("seconds")) {
    log.add(table.source(), prefix + ".seconds", "applies to action = \"stop\" only");
  }
  return fault;
}

}  // namespace

void readFaults(const toml::node& value, JobSpec& job, IssueLog& log) {
  const auto* array = value.as_array();
  if (!array || !array->is_array_of_tables()) {
    log.add(value.source(), "faults",
            "expected [[faults]] tables (rank, at_step, action, ms, seconds, attempt), got " +
                typeName(value));
    return;
  }
  for (size_t i = 0; i < array->size(); ++i) {
    const std::string prefix = "faults[" + std::to_string(i) + "]";
    job.faults.push_back(readFault(*array->get(i)->as_table(), prefix, log));
  }
}

void checkFaults(const toml::table& root, const JobSpec& job, IssueLog& log) {
  const int world = processCount(job);
  const auto* array = root.get_as<toml::array>("faults");
  for (size_t i = 0; i < job.faults.size(); ++i) {
    if (job.faults[i].rank < world) continue;
    const toml::node* where = array ? array->get(i) : nullptr;
    log.add(where ? where->source() : toml::source_region{},
            "faults[" + std::to_string(i) + "].rank",
            "must be one of the run's processes 0.." + std::to_string(world - 1) + ", got " +
                std::to_string(job.faults[i].rank));
  }
}

std::string faultsToml(const JobSpec& job) {
  std::string text;
  for (const InjectedFault& f : job.faults) {
    text += "\n[[faults]]\nrank = " + std::to_string(f.rank) +
            "\nat_step = " + std::to_string(f.at_step) + "\naction = " + quoted(nameOf(f.action)) +
            "\n";
    if (f.ms > 0) text += "ms = " + std::to_string(f.ms) + "\n";
    if (f.seconds > 0) text += "seconds = " + std::to_string(f.seconds) + "\n";
    if (f.attempt > 0) text += "attempt = " + std::to_string(f.attempt) + "\n";
  }
  return text;
}

}  // namespace ranklab::job_detail
