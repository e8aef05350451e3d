#include "app/cli/analysis_report.h"

#include "app/cli/report_format.h"
#include "app/terminal_text.h"

namespace ranklab {

nlohmann::json stragglersJson(const RunAnalysis& a) {
  nlohmann::json out = nlohmann::json::array();
  for (const StragglerStats& s : a.stragglers)
    out.push_back({{"rank", s.rank},
                   {"last_arrivals", s.last_arrivals},
                   {"caused_wait_s", s.caused_wait_s},
                   {"kind", s.kind},
                   {"last_share", s.last_share},
                   {"recent_share", s.recent_share}});
  return out;
}

nlohmann::json chronicRuleJson(const ChronicRule& rule) {
  return {{"window", rule.window}, {"share_above", rule.share_above}};
}

nlohmann::json hangJson(const RunAnalysis& a) {
  if (!a.hang) return nullptr;
  const HangReport& h = *a.hang;
  nlohmann::json behind = nlohmann::json::array();
  for (const RankProgress& p : h.ranks_behind)
    behind.push_back(
        {{"rank", p.rank},
         {"host", p.host},
         {"last_step", p.last_step < 0 ? nlohmann::json() : nlohmann::json(p.last_step)},
         {"last_collective", p.last_collective},
         {"phase", p.phase}});
  return {{"status", h.status},
          {"failure", h.failure.empty() ? nlohmann::json() : nlohmann::json(h.failure)},
          {"median_last_step",
           h.median_last_step < 0 ? nlohmann::json() : nlohmann::json(h.median_last_step)},
          {"ranks_behind", behind}};
}

void printStragglers(std::ostream& out, const RunAnalysis& a, const std::string& indent,
                     size_t others) {
  if (a.chronic.window == 0) return;  // no collective compared
  const bool every_rank = others == std::numeric_limits<size_t>::max();
  const std::string recent = "last " + std::to_string(a.chronic.window);
  out << indent
      << format("%-13s  %-7s  %8s  %8s  %20s\n", "stragglers", "kind", "share", recent.c_str(),
                "caused wait (rank-s)");
  size_t shown = 0, left = 0;
  for (const StragglerStats& s : a.stragglers) {
    const bool listed =
        every_rank || s.kind == "chronic" || (s.kind == "moving" && shown++ < others);
    if (!listed) {
      left += s.kind == "moving";
      continue;
    }
    out << indent
        << format("  rank %-6d  %-7s  %6.1f %%  %6.1f %%  %20.3f\n", s.rank, s.kind.c_str(),
                  100 * s.last_share, 100 * s.recent_share, s.caused_wait_s);
  }
  if (left > 0)
    out << indent
        << format("  ... and %zu more ranks last at times (`ranklab analyze` lists every rank)\n",
                  left);
  out << indent
      << format("  chronic: last in more than %.0f %% of the last %lld collectives\n",
                100 * a.chronic.share_above, (long long)a.chronic.window);
}

void printHang(std::ostream& out, const RunAnalysis& a, const std::string& indent, size_t rows) {
  if (!a.hang) return;
  const HangReport& h = *a.hang;
  out << indent << "hang: the run is " << h.status;
  if (!h.failure.empty()) out << ": " << terminalSafe(h.failure);
  out << "\n";
  if (h.ranks_behind.empty()) {
    out << indent
        << format("  no rank behind step %lld, which half the ranks reached or passed\n",
                  (long long)h.median_last_step);
    return;
  }
  out << indent
      << format("  ranks behind step %lld (which half the ranks reached), or found dead or hung\n",
                (long long)h.median_last_step);
  out << indent
      << format("  %-11s  %-20s  %10s  %10s  %s\n", "", "host", "last step", "collective", "phase");
  for (size_t i = 0; i < h.ranks_behind.size() && i < rows; ++i) {
    const RankProgress& p = h.ranks_behind[i];
    const std::string step = p.last_step < 0 ? "-" : std::to_string(p.last_step);
    out << indent
        << format("  rank %-6d  %-20s  %10s  %10lld  %s\n", p.rank,
                  terminalSafe(p.host.empty() ? "-" : p.host).c_str(), step.c_str(),
                  (long long)p.last_collective, terminalSafe(p.phase).c_str());
  }
  if (h.ranks_behind.size() > rows)
    out << indent << format("  ... and %zu more\n", h.ranks_behind.size() - rows);
}

}  // namespace ranklab
