#include "app/cli/analysis_commands.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/analysis_report.h"
#include "app/cli/json_output.h"
#include "app/cli/report_format.h"
#include "app/terminal_text.h"
#include "engine/job/job_key_relevance.h"
#include "engine/job/job_keys.h"
#include "storage/analysis/run_analysis.h"
#include "storage/analysis/run_diff.h"
#include "storage/run_origin.h"
#include "storage/run_store.h"
#include "storage/trace_import/trace_import.h"

namespace ranklab {
namespace {

nlohmann::json reportJson(const ImportReport& r) {
  return {{"run_id", r.run_id},
          {"ranks", r.ranks},
          {"skipped", r.skipped},
          {"steps", r.steps},
          {"events", r.events},
          {"ignored", r.ignored},
          {"collectives", r.collectives},
          {"collectives_with_bytes", r.collectives_with_bytes},
          {"device_pieces", r.device_pieces},
          {"kept_as_spans", r.kept_other},
          {"clocks", r.clocks},
          {"collective_source", r.collective_source}};
}

void printReport(std::ostream& out, const ImportReport& r) {
  for (const std::string& rank : r.ranks) out << "  " << terminalSafe(rank) << "\n";
  out << format(
             "  %lld step rows; %lld timed events read (%lld metadata, counter and flow "
             "events not timed)\n",
             (long long)r.steps, (long long)r.events, (long long)r.ignored)
      << format("  %lld collectives from %s, %lld with their sizes\n", (long long)r.collectives,
                r.collective_source.c_str(), (long long)r.collectives_with_bytes)
      << format("  %lld device pieces; %lld events outside every step kept as spans\n",
                (long long)r.device_pieces, (long long)r.kept_other)
      << "  clocks " << r.clocks << "\n";
  for (const std::string& s : r.skipped) out << "  skipped " << terminalSafe(s) << "\n";
}

nlohmann::json analysisJson(const RunAnalysis& a) {
  nlohmann::json doc{{"run_id", a.run_id},
                     {"origin", a.origin},
                     {"world", a.world},
                     {"breakdown", nlohmann::json::array()},
                     {"overlap", nlohmann::json::array()},
                     {"collectives", nlohmann::json::array()},
                     {"notes", a.notes}};
  for (const RankBreakdown& b : a.breakdown) {
    doc["breakdown"].push_back({{"rank", b.rank},
                                {"steps", b.steps},
                                {"compute_s", b.compute_s},
                                {"comm_s", b.comm_s},
                                {"wait_s", b.wait_s},
                                {"data_s", b.data_s},
                                {"idle_s", b.idle_s}});
    doc["overlap"].push_back({{"rank", b.rank}, {"overlap", b.overlap}});
  }
  for (const CollectiveStats& c : a.collectives)
    doc["collectives"].push_back({{"kind", c.kind},
                                  {"count", c.count},
                                  {"transfer_s", c.transfer_s},
                                  {"wait_s", c.wait_s},
                                  {"bus_bytes", c.bus_bytes},
                                  {"busbw_gbps", c.busbw_gbps}});
  doc["stragglers"] = stragglersJson(a);
  doc["chronic_rule"] = chronicRuleJson(a.chronic);
  doc["hang"] = hangJson(a);
  nlohmann::json shares = nlohmann::json::array();
  for (const PathShare& p : a.critical_path.shares)
    shares.push_back({{"rank", p.rank}, {"phase", p.phase}, {"share", p.share}});
  doc["critical_path"] = {{"shares", shares},
                          {"steps", a.critical_path.steps},
                          {"path_s", a.critical_path.path_s},
                          {"span_s", a.critical_path.span_s},
                          {"what_if_rank", a.critical_path.what_if_rank},
                          {"what_if_s", a.critical_path.what_if_s}};
  return doc;
}

std::string who(int rank) {
  return rank < 0 ? "all ranks" : "rank " + std::to_string(rank);
}

void printBreakdown(std::ostream& out, const RunAnalysis& a) {
  out << "time per rank (s)   compute     comm     wait     data     idle  overlap\n";
  for (const RankBreakdown& b : a.breakdown)
    out << format("  rank %-4d  %14.3f %8.3f %8.3f %8.3f %8.3f  %6.1f %%\n", b.rank, b.compute_s,
                  b.comm_s, b.wait_s, b.data_s, b.idle_s, 100 * b.overlap);
}

void printCollectives(std::ostream& out, const RunAnalysis& a) {
  if (a.collectives.empty()) return;
  out << "collectives         count  transfer s   wait s  busbw GB/s\n";
  for (const CollectiveStats& c : a.collectives)
    out << format("  %-16s %7lld %11.3f %8.3f %11.2f\n", c.kind.c_str(), (long long)c.count,
                  c.transfer_s, c.wait_s, c.busbw_gbps);
  printStragglers(out, a, "");
}

void printPath(std::ostream& out, const RunAnalysis& a) {
  const CriticalPath& p = a.critical_path;
  if (p.steps == 0) return;
  out << format("critical path over %lld steps: %.3f s (their span on the clock: %.3f s)\n",
                (long long)p.steps, p.path_s, p.span_s);
  for (const PathShare& s : p.shares)
    if (s.share >= 0.005)
      out << format("  %5.1f %%  %s %s\n", 100 * s.share, who(s.rank).c_str(), s.phase.c_str());
  if (p.what_if_rank >= 0)
    out << format("  what if rank %d computed as fast as the median rank: %.3f s (%.1f %% less)\n",
                  p.what_if_rank, p.what_if_s,
                  p.path_s > 0 ? 100 * (1 - p.what_if_s / p.path_s) : 0.0);
}

nlohmann::json diffJson(const RunDiff& d, const std::vector<SettingDifference>& settings) {
  nlohmann::json parts = nlohmann::json::array();
  for (const DiffPart& p : d.parts)
    parts.push_back({{"rank", p.rank}, {"phase", p.phase}, {"delta_s", p.delta_s}});
  nlohmann::json differences = nlohmann::json::array();
  for (const SettingDifference& s : settings)
    differences.push_back({{"key", s.path}, {"values", s.values}});
  return {{"run_a", d.run_a},
          {"run_b", d.run_b},
          {"steps", d.steps},
          {"a_s", d.a_s},
          {"b_s", d.b_s},
          {"total_delta_s", d.total_delta_s},
          {"parts", parts},
          {"parts_sum_s", d.parts_sum_s},
          {"differences", differences}};
}

void printDiff(std::ostream& out, const RunDiff& d,
               const std::vector<SettingDifference>& settings) {
  out << format(
      "run %lld against run %lld over %lld steps both recorded: %.3f s against %.3f s "
      "(%+.3f s, %+.1f %%)\n",
      (long long)d.run_b, (long long)d.run_a, (long long)d.steps, d.b_s, d.a_s, d.total_delta_s,
      d.a_s > 0 ? 100 * d.total_delta_s / d.a_s : 0.0);
  out << "where it changed, along each run's critical path (s)\n";
  for (const DiffPart& p : d.parts)
    if (std::abs(p.delta_s) >= 0.0005)
      out << format("  %+9.3f  %s %s\n", p.delta_s, who(p.rank).c_str(), p.phase.c_str());
  out << format("  (the parts add up to %+.3f s)\n", d.parts_sum_s);
  out << "settings that differ\n";
  if (settings.empty()) out << "  (none, or not comparable: an imported run has no ranklab job)\n";
  for (const SettingDifference& s : settings) {
    out << "  " << terminalSafe(s.path) << ":";
    for (const std::string& v : s.values) out << "  " << terminalSafe(v.empty() ? "-" : v);
    out << "\n";
  }
}

}  // namespace

int diffCommand(const CliArgs& args) {
  noMoreThan(args, 3, "diff");
  const int64_t a = runIdAt(args, 1), b = runIdAt(args, 2);
  RunStore store(args.db);
  const RunDiff diff = diffRuns(store, a, b);
  // An imported run has no ranklab job: every setting would read as its default.
  const auto run_a = store.run(a), run_b = store.run(b);
  const bool both_ours = originOf(*run_a) != RunOrigin::kPytorchImport &&
                         originOf(*run_b) != RunOrigin::kPytorchImport;
  const std::vector<SettingDifference> settings =
      both_ours ? differingSettings({run_a->job_toml, run_b->job_toml})
                : std::vector<SettingDifference>{};
  if (args.json)
    printJson(std::cout, diffJson(diff, settings), std::cerr);
  else
    printDiff(std::cout, diff, settings);
  return 0;
}

int importCommand(const CliArgs& args) {
  positional(args, 1, "trace file or folder");
  const std::vector<std::string> paths(args.positional.begin() + 1, args.positional.end());
  RunStore store(args.db);
  const ImportReport report =
      importPytorchTraces(store, paths, args.name, [&](const std::string& line) {
        if (!args.quiet && !args.json) std::cerr << "import: " << line << "\n";
      });
  if (args.json) {
    printJson(std::cout, reportJson(report), std::cerr);
    return 0;
  }
  std::cout << report.run_id << "\n";
  if (!args.quiet) printReport(std::cerr, report);
  return 0;
}

int analyzeCommand(const CliArgs& args) {
  noMoreThan(args, 2, "analyze");
  RunStore store(args.db);
  const RunAnalysis analysis = analyzeRun(store, runIdAt(args, 1));
  if (args.json) {
    printJson(std::cout, analysisJson(analysis), std::cerr);
    return 0;
  }
  std::cout << "run " << analysis.run_id << " (" << analysis.origin << ", " << analysis.world
            << " ranks)\n";
  printBreakdown(std::cout, analysis);
  printCollectives(std::cout, analysis);
  printPath(std::cout, analysis);
  printHang(std::cout, analysis, "");
  for (const std::string& n : analysis.notes) std::cout << "note: " << n << "\n";
  return 0;
}

}  // namespace ranklab
