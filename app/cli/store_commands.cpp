#include "app/cli/store_commands.h"

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "app/cli/analysis_report.h"
#include "app/cli/attach_command.h"
#include "app/cli/json_output.h"
#include "app/cli/prediction_record.h"
#include "app/cli/report_format.h"
#include "app/terminal_text.h"
#include "engine/job/control_characters.h"
#include "engine/job/job_key_relevance.h"
#include "storage/analysis/run_analysis.h"
#include "storage/chrome_trace.h"
#include "storage/run_store.h"
#include "storage/steps_csv.h"

namespace ranklab {

namespace {

// A thousand ranks' rows would bury the summary: the worst few, `analyze` has every one.
constexpr size_t kStragglersShown = 5;
constexpr size_t kRanksBehindShown = 20;

RunSummary summaryOrThrow(RunStore& store, const CliArgs& args, int64_t id) {
  auto summary = store.summary(id);
  if (!summary) throw std::runtime_error(args.db + ": no run with id " + std::to_string(id));
  return *summary;
}

std::vector<std::string> tagsOf(RunStore& store, int64_t id) {
  const auto all = store.tags();
  const auto it = all.find(id);
  return it == all.end() ? std::vector<std::string>{} : it->second;
}

// The words from positional[3] on: the tags of `runs tag ID TAG…`.
std::vector<std::string> tagsFromArgs(const CliArgs& args) {
  positional(args, 3, "tag (one or more)");
  std::vector<std::string> tags(args.positional.begin() + 3, args.positional.end());
  for (const std::string& t : tags) {
    if (t.empty() || t.find(',') != std::string::npos)
      throw UsageError("tag \"" + terminalSafe(t) +
                       "\": a tag is one non-empty word without commas");
    if (const auto bad = textProblemIn(t))
      throw UsageError("tag \"" + terminalSafe(t) + "\": " + *bad);
  }
  return tags;
}

// A store opened read-only (a full disk, a newer ranklab's file) says so before anything.
void noteIfReadOnly(const RunStore& store) {
  if (!store.readOnlyReason().empty())
    std::cerr << "ranklab: note: " << terminalSafe(store.readOnlyReason()) << "\n";
}

int listRuns(RunStore& store, const CliArgs& args) {
  const auto runs = store.listRuns();
  if (args.json) {
    auto list = nlohmann::json::array();
    for (const auto& r : runs) list.push_back(runRowJson(r));
    printJson(std::cout, list, std::cerr);
  } else {
    printRunList(std::cout, runs);
  }
  return 0;
}

int showRun(RunStore& store, const CliArgs& args, int64_t id) {
  const RunSummary summary = summaryOrThrow(store, args, id);
  const std::vector<std::string> tags = tagsOf(store, id);
  // Who straggles and who is stuck, as `analyze` says it (its collectives and path stay there).
  const RunAnalysis analysis = analyzeRun(store, id);
  if (args.json) {
    nlohmann::json doc = summaryJson(summary);
    doc["tags"] = tags;
    doc.update(predictionJson(store, id));
    doc["stragglers"] = stragglersJson(analysis);
    doc["chronic_rule"] = chronicRuleJson(analysis.chronic);
    doc["hang"] = hangJson(analysis);
    printJson(std::cout, doc, std::cerr);
    return 0;
  }
  printRunWithPrediction(std::cout, store, summary, false);
  if (!tags.empty()) {
    std::cout << "  tags";
    for (const auto& t : tags) std::cout << " " << terminalSafe(t);
    std::cout << "\n";
  }
  printStragglers(std::cout, analysis, "  ", kStragglersShown);
  printHang(std::cout, analysis, "  ", kRanksBehindShown);
  return 0;
}

// tag adds the words to the run's tags, untag removes them; either prints the result.
int editTags(RunStore& store, const CliArgs& args, int64_t id, bool add) {
  summaryOrThrow(store, args, id);
  std::set<std::string> tags;
  for (const auto& t : tagsOf(store, id)) tags.insert(t);
  for (const auto& t : tagsFromArgs(args)) add ? (void)tags.insert(t) : (void)tags.erase(t);
  const std::vector<std::string> result(tags.begin(), tags.end());
  store.setTags(id, result);
  if (args.json) {
    printJson(std::cout, nlohmann::json{{"id", id}, {"tags", result}}, std::cerr);
  } else {
    std::cout << "run " << id << " tags:";
    for (const auto& t : result) std::cout << " " << terminalSafe(t);
    std::cout << (result.empty() ? " (none)\n" : "\n");
  }
  return 0;
}

// Past this many events a whole-run trace gets a note: a browser's viewer struggles.
constexpr int64_t kLargeTraceEvents = 2'000'000;

TraceWindow traceWindow(const CliArgs& args) {
  TraceWindow window;
  if (args.step_range) std::tie(window.first_step, window.last_step) = *args.step_range;
  window.ranks.insert(args.rank_list.begin(), args.rank_list.end());
  return window;
}

int exportRun(RunStore& store, const CliArgs& args, int64_t id) {
  if (args.csv.empty() && args.trace.empty())
    throw UsageError("runs export ID needs --csv FILE or --trace FILE.json (or both)");
  if (args.trace.empty() && (args.step_range || !args.rank_list.empty()))
    throw UsageError(
        "runs export: --step-range and --rank-list choose what --trace holds; "
        "give --trace FILE.json");
  // "-" is standard output: the export alone goes there, and what was written is said on
  // standard error.
  const bool to_stdout = args.csv == "-" || args.trace == "-";
  if (args.csv == "-" && args.trace == "-")
    throw UsageError("runs export: --csv - and --trace - would both write to standard output");
  if (to_stdout && args.json)
    throw UsageError("runs export: --json and an export to standard output (\"-\") would mix");
  std::ostream& report = to_stdout ? std::cerr : std::cout;
  const RawStdoutUnlessTerminal exact_bytes_into_a_pipe;
  nlohmann::json result{{"id", id}};
  if (!args.csv.empty()) {
    const int64_t rows = exportStepsCsv(store, id, args.csv);
    result["rows"] = rows;
    result["csv"] = args.csv;
    if (!args.json)
      report << "run " << id << ": " << rows << " step rows written to " << args.csv << "\n";
  }
  if (!args.trace.empty()) {
    const TraceWindow window = traceWindow(args);
    const int64_t events = exportChromeTrace(store, id, args.trace, window);
    result["trace_events"] = events;
    result["trace"] = args.trace;
    if (!args.json)
      report << "run " << id << ": " << events << " trace events written to " << args.trace
             << " (open it in https://ui.perfetto.dev or chrome://tracing)\n";
    if (window.whole() && events > kLargeTraceEvents)
      std::cerr << "note: a trace of " << events << " events is slow or too large to open in a "
                << "browser's viewer; --step-range FIRST:LAST and --rank-list 0-15,777 write a "
                   "part of the run\n";
  }
  if (args.json) printJson(std::cout, result, std::cerr);
  return 0;
}

}  // namespace

int runsCommand(const CliArgs& args) {
  static const std::set<std::string> verbs = {"list",   "show", "attach", "delete",
                                              "rename", "tag",  "untag",  "export"};
  const std::string& verb =
      positional(args, 1, "runs verb (list, show, attach, delete, rename, tag, untag, export)");
  if (!verbs.count(verb)) {
    throw UsageError("unknown runs verb \"" + verb +
                     "\" (allowed: list, show, attach, delete, rename, tag, untag, export)");
  }
  // Words past what a verb takes are refused, not ignored: `runs delete 3 4` deletes no 4.
  if (verb == "list") noMoreThan(args, 2, "runs list");
  if (verb == "rename") noMoreThan(args, 4, "runs rename");
  if (verb != "list" && verb != "rename" && verb != "tag" && verb != "untag")
    noMoreThan(args, 3, "runs " + verb);
  RunStore store(args.db);
  noteIfReadOnly(store);
  if (verb == "list") return listRuns(store, args);
  const int64_t id = runIdAt(args, 2);
  if (verb == "show") return showRun(store, args, id);
  if (verb == "attach") return attachRun(store, args, id);
  if (verb == "export") return exportRun(store, args, id);
  if (verb == "tag" || verb == "untag") return editTags(store, args, id, verb == "tag");
  if (verb == "rename") {
    const std::string& name = positional(args, 3, "new name");
    if (name.empty()) throw UsageError("runs rename: the new name is empty");
    if (const auto bad = textProblemIn(name)) throw UsageError("runs rename: the new name " + *bad);
    summaryOrThrow(store, args, id);
    store.renameRun(id, name);
    if (!args.json) std::cout << "run " << id << " renamed to \"" << terminalSafe(name) << "\"\n";
    return 0;
  }
  store.deleteRun(id);  // "delete", the last verb
  if (!args.json) std::cout << "deleted run " << id << "\n";
  return 0;
}

int compareCommand(const CliArgs& args) {
  if (args.positional.size() < 3) throw UsageError("compare needs two or more run IDs");
  RunStore store(args.db);
  noteIfReadOnly(store);
  std::vector<RunSummary> runs;
  std::vector<std::string> jobs;
  for (size_t i = 1; i < args.positional.size(); ++i) {
    runs.push_back(summaryOrThrow(store, args, runIdAt(args, i)));
    jobs.push_back(runs.back().run.job_toml);
  }
  const std::vector<SettingDifference> differences = differingSettings(jobs);
  if (args.json)
    printJson(std::cout, compareJson(runs, differences), std::cerr);
  else
    printComparison(std::cout, runs, differences);
  return 0;
}

}  // namespace ranklab
