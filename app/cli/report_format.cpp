#include "app/cli/report_format.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>

#include "app/cli/layout_json.h"
#include "app/terminal_text.h"
#include "engine/job/job_choices.h"
#include "storage/run_origin.h"
#include "storage/scheduler_text.h"

namespace ranklab {

namespace {

// Runs of more ranks list only their slowest in the text summary.
constexpr size_t kRanksListedWhole = 32;
constexpr size_t kRanksListedSlowest = 10;

// "allreduce/ring"; a strategy the algorithm does not apply to (a parameter server) alone.
std::string strategyText(const RunRow& run) {
  return run.algorithm.empty() ? run.strategy : run.strategy + "/" + run.algorithm;
}

std::string megabytes(int64_t bytes) {
  return format("%.1f MB", bytes / 1e6);
}

// Bytes sent, and with a codec how many times fewer than uncompressed.
std::string sentWithRatio(int64_t tx, int64_t raw) {
  const std::optional<double> ratio = compressionRatio(raw, tx);
  if (!ratio) return megabytes(tx);
  return megabytes(tx) + format(" (%.1fx)", *ratio);
}

// The memory ledger's bytes: parameters, gradients, optimizer state and activations held.
int64_t heldBytes(const RankSummary& r) {
  const auto& m = r.memory;
  return m.params + m.grads + m.optimizer + m.activations_peak + m.buffers;
}

// Mean over the ranks that stepped of one of their per-step times, in ms.
double meanMsPerStep(const RunSummary& s, double RankSummary::*seconds) {
  double sum = 0;
  int counted = 0;
  for (const auto& r : s.ranks) {
    if (r.steps == 0) continue;
    sum += r.*seconds * 1e3 / double(r.steps);
    ++counted;
  }
  return counted ? sum / counted : 0;
}

// The last test loss, "-" before any evaluation, "diverged (not finite)" after a NaN or inf.
std::string testLossText(const RunSummary& s) {
  if (s.diverged) return "diverged (not finite)";
  return s.test_loss ? format("%.4f", *s.test_loss) : std::string("-");
}

// The rows of the side-by-side summary: a metric's name and its text for one run.
struct ComparedMetric {
  const char* name;
  std::string (*text)(const RunSummary&);
};

const std::vector<ComparedMetric>& comparedMetrics() {
  static const std::vector<ComparedMetric> metrics = {
      {"name", [](const RunSummary& s) { return terminalSafe(s.run.name); }},
      {"status", [](const RunSummary& s) { return shownStatus(s.run); }},
      {"ranks", [](const RunSummary& s) { return std::to_string(s.run.world); }},
      {"strategy", [](const RunSummary& s) { return strategyText(s.run); }},
      {"codec, precision", [](const RunSummary& s) { return s.run.codec + ", " + s.run.amp; }},
      {"steps", [](const RunSummary& s) { return std::to_string(s.steps); }},
      {"wall s", [](const RunSummary& s) { return format("%.2f", s.run.wall_s); }},
      {"training s", [](const RunSummary& s) { return format("%.2f", s.run.train_s); }},
      {"samples/s", [](const RunSummary& s) { return format("%.0f", s.samples_per_s); }},
      {"test accuracy",
       [](const RunSummary& s) {
         return s.test_accuracy ? format("%.4f", *s.test_accuracy) : std::string("-");
       }},
      {"test loss", [](const RunSummary& s) { return testLossText(s); }},
      {"sent", [](const RunSummary& s) { return sentWithRatio(s.bytes_tx, s.bytes_raw); }},
      {"compute ms/step",
       [](const RunSummary& s) {
         return format("%.2f", meanMsPerStep(s, &RankSummary::compute_s));
       }},
      {"comm ms/step",
       [](const RunSummary& s) { return format("%.2f", meanMsPerStep(s, &RankSummary::comm_s)); }},
      {"wait ms/step",
       [](const RunSummary& s) { return format("%.2f", meanMsPerStep(s, &RankSummary::wait_s)); }},
      {"pipeline bubble (formula)",
       [](const RunSummary& s) {
         const nlohmann::json layout = layoutJson(s);
         if (layout["bubble_fraction"].is_null()) return std::string("-");
         return format("%.3f (%.3f)", layout["bubble_fraction"].get<double>(),
                       layout["bubble_formula"].get<double>());
       }},
      {"held MB per rank (largest)",
       [](const RunSummary& s) {
         int64_t held = 0;
         for (const auto& r : s.ranks) held = std::max(held, heldBytes(r));
         return held > 0 ? format("%.1f", static_cast<double>(held) / 1e6) : std::string("-");
       }},
  };
  return metrics;
}

// A table with a first column of names and one column per run, each as wide as it needs.
void printColumns(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (widths.size() <= c) widths.push_back(0);
      widths[c] = std::max(widths[c], row[c].size());
    }
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c)
      line += " " + row[c] + std::string(widths[c] - row[c].size() + 2, ' ');
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

// "h1 (ranks 0-1), h2 (ranks 2-3)" when the ranks ran on more than one host, else "".
std::string hostsLine(const RunSummary& s) {
  std::vector<std::pair<std::string, std::vector<int>>> hosts;  // in rank order
  for (const auto& r : s.ranks) {
    auto found =
        std::find_if(hosts.begin(), hosts.end(), [&](const auto& h) { return h.first == r.host; });
    if (found == hosts.end()) found = hosts.insert(hosts.end(), {r.host, {}});
    found->second.push_back(r.rank);
  }
  if (hosts.size() < 2) return "";
  std::string line;
  for (const auto& [host, ranks] : hosts) {
    const bool run = ranks.back() - ranks.front() + 1 == static_cast<int>(ranks.size());
    std::string list;
    for (int rank : ranks) list += (list.empty() ? "" : ",") + std::to_string(rank);
    line += (line.empty() ? "" : ", ") + host + " (ranks " +
            (run && ranks.size() > 1
                 ? std::to_string(ranks.front()) + "-" + std::to_string(ranks.back())
                 : list) +
            ")";
  }
  return line;
}

}  // namespace

// A parameter server's shards, one object each.
static nlohmann::json serversJson(const RunSummary& s) {
  nlohmann::json servers = nlohmann::json::array();
  for (const auto& v : s.servers) {
    servers.push_back({{"rank", v.rank},
                       {"shard", v.shard},
                       {"key_begin", v.key_begin},
                       {"key_end", v.key_end},
                       {"pushes", v.pushes},
                       {"pulls", v.pulls},
                       {"bytes_rx", v.bytes_rx},
                       {"bytes_tx", v.bytes_tx},
                       {"bytes_raw", v.bytes_raw},
                       {"busy_s", v.busy_s},
                       {"idle_s", v.idle_s},
                       {"max_staleness", v.max_staleness}});
  }
  return servers;
}

namespace {

// The run's batch job (Slurm), or null for a local run.
nlohmann::json schedulerJson(const RunRow& r) {
  if (r.scheduler_job.empty()) return nullptr;
  return {{"name", "slurm"},
          {"job_id", r.scheduler_job},
          {"state", r.scheduler_state},
          {"reason", r.scheduler_reason},
          {"nodes", r.nodes},
          {"exit_code", r.scheduler_exit}};
}

}  // namespace

nlohmann::json summaryJson(const RunSummary& s) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : s.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"host", r.host},
                     {"steps", r.steps},
                     {"compute_s", r.compute_s},
                     {"comm_s", r.comm_s},
                     {"wait_s", r.wait_s},
                     {"comm_hidden_s", r.comm_hidden_s},
                     {"mean_staleness", r.mean_staleness},
                     {"bytes_tx", r.bytes_tx},
                     {"bytes_raw", r.bytes_raw},
                     {"stashed_peak", r.stashed_peak},
                     {"activations_peak_bytes", r.stashed_bytes_peak},
                     {"lost_messages", r.lost_messages},
                     {"memory",
                      {{"params", r.memory.params},
                       {"grads", r.memory.grads},
                       {"optimizer", r.memory.optimizer},
                       {"activations_peak", r.memory.activations_peak},
                       {"buffers", r.memory.buffers}}},
                     {"collectives",
                      {{"allreduce", r.collectives.allreduce},
                       {"reduce_scatter", r.collectives.reduce_scatter},
                       {"all_gather", r.collectives.all_gather},
                       {"send", r.collectives.send},
                       {"recv", r.collectives.recv}}},
                     {"traffic", trafficJson(r)},
                     {"activations", activationsJson(r)}});
  }
  auto optional = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  nlohmann::json json = {
      {"id", s.run.id},
      {"name", s.run.name},
      {"status", shownStatus(s.run)},
      {"scheduler", schedulerJson(s.run)},
      {"created", s.run.created},
      {"finished", s.run.finished},
      {"world", s.run.world},
      {"strategy", s.run.strategy},
      {"algorithm", s.run.algorithm},
      {"codec", s.run.codec},
      {"amp", s.run.amp},
      {"epochs", s.run.epochs},
      {"origin", s.run.origin},
      {"steps", s.steps},
      {"samples", s.samples},
      {"wall_s", s.run.wall_s},
      {"train_s", s.run.train_s},
      {"samples_per_s", s.samples_per_s},
      {"test_accuracy", optional(s.test_accuracy)},
      {"test_loss", s.diverged ? nlohmann::json() : optional(s.test_loss)},
      {"diverged", s.diverged},
      {"bytes_tx", s.bytes_tx},
      {"bytes_raw", s.bytes_raw},
      {"overflow_steps", s.overflow_steps},
      {"restarts", s.restarts},
      {"sample",
       s.sample ? nlohmann::json{{"step", s.sample_step}, {"text", *s.sample}} : nlohmann::json()},
      {"ranks", ranks},
      {"servers", serversJson(s)}};
  json.update(layoutJson(s));
  json.update(languageJson(s));
  return json;
}

nlohmann::json runRowJson(const RunRow& r) {
  return {{"id", r.id},
          {"name", r.name},
          {"created", r.created},
          {"finished", r.finished},
          {"status", shownStatus(r)},
          {"scheduler", schedulerJson(r)},
          {"world", r.world},
          {"strategy", r.strategy},
          {"algorithm", r.algorithm},
          {"codec", r.codec},
          {"amp", r.amp},
          {"epochs", r.epochs},
          {"origin", r.origin},
          {"wall_s", r.wall_s},
          {"train_s", r.train_s}};
}

namespace {

// "1.23 MB (1.23)": measured, and the formula where there is one.
std::string measuredAndFormula(const nlohmann::json& group) {
  const double measured = group["measured"].get<double>() / 1e6;
  if (group["formula"].is_null()) return format("%.3f (-)", measured);
  return format("%.3f (%.3f)", measured, group["formula"].get<double>() / 1e6);
}

// Each rank's bytes per step to each of its groups, measured beside the formula: who talks
// to whom, and whether it says as much as it should. Runs whose ranks recorded formulas.
void printTraffic(std::ostream& out, const RunSummary& s) {
  if (std::none_of(s.ranks.begin(), s.ranks.end(),
                   [](const RankSummary& r) { return !r.traffic_formula.empty(); }))
    return;
  out << "  MB sent per step, measured (formula)\n"
      << "  rank   data              tensor            pipeline\n";
  for (const auto& r : s.ranks) {
    if (r.steps == 0) continue;
    const nlohmann::json t = trafficJson(r);
    out << format("  %4d   %-16s  %-16s  %s\n", r.rank, measuredAndFormula(t["data"]).c_str(),
                  measuredAndFormula(t["tensor"]).c_str(),
                  measuredAndFormula(t["pipeline"]).c_str());
  }
}

// "12.599 (12.599)": a layer's MB measured, and by formula where there is one.
std::string layerCell(const LayerActivations& layer) {
  return layer.formula ? format("%.3f (%.3f)", layer.bytes / 1e6, *layer.formula / 1e6)
                       : format("%.3f", layer.bytes / 1e6);
}

// What each layer keeps for backward, measured beside the formula where there is one: a
// column per part of the model, ranks holding the same part (data replicas, a stage's
// slices) sharing one; a row per layer, then the totals and the backward's workspace.
void printActivations(std::ostream& out, const RunSummary& s) {
  struct Part {
    std::string ranks;
    const std::vector<LayerActivations>* layers;
  };
  std::vector<Part> parts;
  std::vector<std::string> names;  // every layer, in the order the parts hold them
  for (const auto& r : s.ranks) {
    if (r.activations.empty()) continue;
    auto same = std::find_if(parts.begin(), parts.end(),
                             [&](const Part& p) { return sameLedger(*p.layers, r.activations); });
    if (same != parts.end()) {
      same->ranks += "," + std::to_string(r.rank);
      continue;
    }
    parts.push_back({"ranks " + std::to_string(r.rank), &r.activations});
    for (const auto& layer : r.activations)
      if (std::find(names.begin(), names.end(), layer.layer) == names.end())
        names.push_back(layer.layer);
  }
  if (parts.empty()) return;
  // A row: its label and one cell per part, without the last cell's padding.
  const auto row = [&](const std::string& label,
                       const std::function<std::string(const Part&)>& cell) {
    std::string text = format("  %-10s", label.c_str());
    for (const Part& p : parts) text += format("  %-22s", cell(p).c_str());
    text.erase(text.find_last_not_of(' ') + 1);
    out << text << "\n";
  };
  out << "  activations kept for backward per layer, MB measured (formula)\n";
  row("layer", [](const Part& p) { return p.ranks; });
  for (const std::string& name : names) {
    row(name, [&](const Part& p) {
      auto layer = std::find_if(p.layers->begin(), p.layers->end(),
                                [&](const auto& l) { return l.layer == name; });
      return layer == p.layers->end() ? std::string() : layerCell(*layer);
    });
  }
  for (const bool workspace : {false, true}) {
    row(workspace ? "workspace" : "total", [&](const Part& p) {
      int64_t bytes = 0;
      for (const auto& l : *p.layers) bytes += workspace ? l.workspace : l.bytes;
      return format("%.3f", bytes / 1e6);
    });
  }
}

// A language model's speed in tokens and its bar (a bigram model's validation loss).
void printLanguage(std::ostream& out, const RunSummary& s) {
  const nlohmann::json language = languageJson(s);
  if (!language["tokens_per_s"].is_null())
    out << format("  %.0f tokens/s", language["tokens_per_s"].get<double>());
  if (!language["val_loss"].is_null() && !language["bigram_baseline"].is_null()) {
    out << format("   validation loss %.4f nats/token against a bigram model's %.4f",
                  language["val_loss"].get<double>(), language["bigram_baseline"].get<double>());
  }
  if (!language["tokens_per_s"].is_null()) out << "\n";
}

// A GPT's latest text, line by line as it wrote them.
void printSample(std::ostream& out, const RunSummary& s) {
  if (!s.sample) return;
  out << format("  sample at step %lld:\n", static_cast<long long>(s.sample_step));
  std::istringstream lines(*s.sample);
  for (std::string line; std::getline(lines, line);) out << "    | " << terminalSafe(line) << "\n";
}

// Parameter server shards, one line each.
void printServers(std::ostream& out, const RunSummary& s) {
  if (s.servers.empty()) return;
  // "versions behind": updates between a worker's pull and its push (not the pushes ahead
  // that parallel.staleness bounds).
  out << "  server rank   keys              pushes   pulls   busy s   idle s   max behind      "
         "sent\n";
  for (const auto& v : s.servers) {
    const std::string keys = format("%lld..%lld", static_cast<long long>(v.key_begin),
                                    static_cast<long long>(v.key_end));
    out << format("  %6d %4d   %-16s %7lld %7lld %8.2f %8.2f %11lld %10s\n", v.shard, v.rank,
                  keys.c_str(), static_cast<long long>(v.pushes), static_cast<long long>(v.pulls),
                  v.busy_s, v.idle_s, static_cast<long long>(v.max_staleness),
                  sentWithRatio(v.bytes_tx, v.bytes_raw).c_str());
  }
}

}  // namespace

namespace {

// A row per rank; past a few dozen ranks a row each is noise: the ranks that waited least
// (in a synchronous job, the slowest), then what the others spread over.
void printRanks(std::ostream& out, const RunSummary& s) {
  std::vector<const RankSummary*> listed;
  for (const auto& r : s.ranks) {
    if (r.steps == 0 && std::any_of(s.servers.begin(), s.servers.end(),
                                    [&](const auto& v) { return v.rank == r.rank; }))
      continue;  // a server: listed below
    listed.push_back(&r);
  }
  const bool many = listed.size() > kRanksListedWhole;
  if (many) {
    std::stable_sort(listed.begin(), listed.end(),
                     [](const auto* a, const auto* b) { return a->wait_s < b->wait_s; });
    out << format("  %zu ranks; the %zu that waited least (the slowest in a synchronous job):\n",
                  listed.size(), kRanksListedSlowest);
  }
  out << "  rank   steps   compute s   comm s (hidden)   wait s       sent   held MB\n";
  for (size_t i = 0; i < listed.size() && (!many || i < kRanksListedSlowest); ++i) {
    const auto& r = *listed[i];
    const double held_mb = static_cast<double>(heldBytes(r)) / 1e6;
    out << format("  %4d  %6lld  %10.2f  %7.2f (%6.2f)  %7.2f  %9s  %8.1f\n", r.rank,
                  static_cast<long long>(r.steps), r.compute_s, r.comm_s, r.comm_hidden_s, r.wait_s,
                  sentWithRatio(r.bytes_tx, r.bytes_raw).c_str(), held_mb);
  }
  if (many) {
    std::vector<double> wait, compute;
    for (const auto* r : listed) {
      wait.push_back(r->wait_s);
      compute.push_back(r->compute_s);
    }
    std::sort(wait.begin(), wait.end());
    std::sort(compute.begin(), compute.end());
    out << format(
        "  ... %zu more ranks; over all: compute s %.2f-%.2f (median %.2f), wait s "
        "%.2f-%.2f (median %.2f); `runs show --json` lists every rank\n",
        listed.size() - kRanksListedSlowest, compute.front(), compute.back(),
        compute[compute.size() / 2], wait.front(), wait.back(), wait[wait.size() / 2]);
  }
}

// The bytes per group and activations per layer, or (brief) one line saying where they are.
void printDetail(std::ostream& out, const RunSummary& s, SummaryDetail detail) {
  std::ostringstream tables;
  printTraffic(tables, s);
  printActivations(tables, s);
  if (tables.str().empty()) return;
  if (detail == SummaryDetail::full) {
    out << tables.str();
    return;
  }
  out << format("  MB sent per group and activations per layer: ranklab runs show %lld\n",
                static_cast<long long>(s.run.id));
}

}  // namespace

void printSummary(std::ostream& out, const RunSummary& s, SummaryDetail detail) {
  const auto accuracy = s.test_accuracy ? format("%.4f", *s.test_accuracy) : std::string("-");
  const std::string loss = testLossText(s);
  out << format("run %lld  %s  [%s]%s\n", static_cast<long long>(s.run.id),
                terminalSafe(s.run.name).c_str(), shownStatus(s.run).c_str(),
                originOf(s.run) == RunOrigin::kRanklab ? "" : ("  (" + s.run.origin + ")").c_str())
      << (s.run.scheduler_job.empty() ? "" : "  " + terminalSafe(schedulerText(s.run)) + "\n")
      << (s.run.strategy == "command"  // a command's ranks (launch.command): no engine keys
              ? format("  %d ranks of a command, started by %s\n", s.run.world,
                       s.run.algorithm.c_str())
              : format("  %d ranks, %s, codec %s, %s, %d epochs\n", s.run.world,
                       strategyText(s.run).c_str(), s.run.codec.c_str(), s.run.amp.c_str(),
                       s.run.epochs))
      << format("  steps %lld   samples %lld   wall %.2f s   training %.2f s   %.0f samples/s\n",
                static_cast<long long>(s.steps), static_cast<long long>(s.samples), s.run.wall_s,
                s.run.train_s, s.samples_per_s)
      << "  test accuracy " << accuracy << "   test loss " << loss << "   sent "
      << (s.run.strategy == "command" ? "? (the wire's bytes are the backend's)"
                                      : megabytes(s.bytes_tx));
  // With a codec: what the same collective would have sent, and the ratio.
  if (const std::optional<double> ratio = compressionRatio(s.bytes_raw, s.bytes_tx)) {
    out << format(" of %s uncompressed (%.1fx)", megabytes(s.bytes_raw).c_str(), *ratio);
  }
  if (choiceNamed<AmpDtype>(s.run.amp) != AmpDtype::kFp32) {  // an imported run's "unknown" too
    out << format("   overflow skips %lld", static_cast<long long>(s.overflow_steps));
  }
  out << "\n";
  printLanguage(out, s);
  if (s.restarts > 0) {
    out << format(
        "  restarted %lld time%s from a checkpoint after a failure (events: failure, "
        "restart, resumed)\n",
        static_cast<long long>(s.restarts), s.restarts == 1 ? "" : "s");
  }
  // Telemetry that never arrived is said, never silent: those messages' steps are missing.
  int64_t lost = 0;
  std::string lost_by_rank;
  for (const auto& r : s.ranks) {
    if (r.lost_messages == 0) continue;
    lost += r.lost_messages;
    lost_by_rank += format("%srank %d: %lld", lost_by_rank.empty() ? "" : ", ", r.rank,
                           static_cast<long long>(r.lost_messages));
  }
  if (lost > 0) {
    out << format(
        "  telemetry lost: %lld messages never arrived (%s); their steps are missing from the "
        "store\n",
        static_cast<long long>(lost), lost_by_rank.c_str());
  }
  // A pipeline's idle share beside the formula's.
  if (const nlohmann::json layout = layoutJson(s); !layout["bubble_fraction"].is_null()) {
    out << format(
        "  pipeline %d stages, %s, %d micro-batches: bubble %.3f measured, %.3f by "
        "(p-1)/(m+p-1)\n",
        layout["layout"]["pipeline"].get<int>(),
        layout["layout"]["schedule"].get<std::string>().c_str(),
        layout["layout"]["microbatches"].get<int>(), layout["bubble_fraction"].get<double>(),
        layout["bubble_formula"].get<double>());
  }
  if (const std::string hosts = hostsLine(s); !hosts.empty()) out << "  hosts " << hosts << "\n";
  printSample(out, s);
  printRanks(out, s);
  printDetail(out, s, detail);
  printServers(out, s);
}

void printRunList(std::ostream& out, const std::vector<RunRow>& runs) {
  out << format("%5s  %-20s  %-20s  %-8s  %5s  %-16s  %8s  %s\n", "id", "name", "created", "status",
                "ranks", "strategy", "wall s", "origin");
  for (const auto& r : runs) {
    const std::string strategy = strategyText(r);
    out << format("%5lld  %-20.20s  %-20s  %-8s  %5d  %-16.16s  %8.1f  %s\n",
                  static_cast<long long>(r.id), terminalSafe(r.name).c_str(), r.created.c_str(),
                  shownStatus(r).c_str(), r.world, strategy.c_str(), r.wall_s, r.origin.c_str());
  }
  if (runs.empty()) out << "(no runs yet: try `ranklab run resources/jobs/quickstart.toml`)\n";
}

nlohmann::json compareJson(const std::vector<RunSummary>& runs,
                           const std::vector<SettingDifference>& differences) {
  nlohmann::json doc{{"runs", nlohmann::json::array()}, {"differences", nlohmann::json::array()}};
  for (const auto& s : runs) doc["runs"].push_back(summaryJson(s));
  for (const auto& d : differences)
    doc["differences"].push_back({{"key", d.path}, {"values", d.values}});
  return doc;
}

void printComparison(std::ostream& out, const std::vector<RunSummary>& runs,
                     const std::vector<SettingDifference>& differences) {
  std::vector<std::string> header{"setting"};
  for (const auto& s : runs) header.push_back("run " + std::to_string(s.run.id));
  out << "settings that differ\n";
  if (differences.empty()) {
    out << "  (none: the jobs are the same)\n";
  } else {
    std::vector<std::vector<std::string>> rows{header};
    for (const auto& d : differences) {
      rows.push_back({d.path});
      rows.back().insert(rows.back().end(), d.values.begin(), d.values.end());
    }
    printColumns(out, rows);
  }
  out << "\nsummaries\n";
  header.front() = "metric";
  std::vector<std::vector<std::string>> rows{header};
  for (const auto& metric : comparedMetrics()) {
    rows.push_back({metric.name});
    for (const auto& s : runs) rows.back().push_back(metric.text(s));
  }
  printColumns(out, rows);
}

}  // namespace ranklab
