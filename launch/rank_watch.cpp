#include "launch/rank_watch.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <unordered_map>

namespace ranklab {

namespace {

std::string thisHost() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

std::string processState(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return "gone";
  // pid (comm) state ...: comm may hold spaces and parentheses, so read after the last ')'.
  const auto close = line.rfind(')');
  const char state = close == std::string::npos || close + 2 >= line.size() ? '?' : line[close + 2];
  switch (state) {
    case 'Z':
    case 'X':
      return "gone";
    case 'T':
      return "stopped (SIGSTOP)";
    case 't':
      return "stopped by a debugger";
    case 'R':
      return "running";
    case 'D':
      return "waiting on a device";
    default:
      return "sleeping";
  }
}

void MpirunVerdict::read(const std::string& line) {
  static const std::regex signal(
      R"(process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+)(?: \(([^)]*)\))?)");
  static const std::regex name(R"(Process name: \[\[\d+,\d+\],(\d+)\])");
  static const std::regex code(R"(Exit code: +(\d+))");
  // ranklab's own launcher of a command's ranks (launch/command_ranks.h) says it in one line.
  static const std::regex exited(
      R"(process rank (\d+) with PID \d+ on node \S+ exited with code (\d+))");
  std::smatch m;
  if (line.find("the job has been aborted") != std::string::npos) aborting_ = true;
  if (std::regex_search(line, m, signal)) {
    const std::string what = m[3].matched ? " (" + m[3].str() + ")" : "";
    causes_.emplace_back(std::stoi(m[1]), "signal " + m[2].str() + what);
  } else if (std::regex_search(line, m, exited)) {
    causes_.emplace_back(std::stoi(m[1]), "exit code " + m[2].str());
  } else if (std::regex_search(line, m, name)) {
    named_rank_ = std::stoi(m[1]);
  } else if (named_rank_ >= 0 && std::regex_search(line, m, code)) {
    causes_.emplace_back(named_rank_, "exit code " + m[1].str());
    named_rank_ = -1;
  }
}

std::string MpirunVerdict::causeOf(int rank) const {
  for (const auto& [r, cause] : causes_)
    if (r == rank) return cause;
  return "";
}

RankWatch::RankWatch(int world, std::chrono::seconds hang_limit)
    : ranks_(static_cast<size_t>(world)), hang_limit_(hang_limit), host_(thisHost()) {
  for (Watched& r : ranks_) r.last_heard = Clock::now();
}

void RankWatch::heard(const telemetry::Envelope& e, Clock::time_point now) {
  if (e.rank() < 0 || e.rank() >= static_cast<int>(ranks_.size())) return;
  Watched& r = ranks_[static_cast<size_t>(e.rank())];
  r.last_heard = now;
  r.heard_any = true;
  if (e.has_hello()) r.host = e.hello().host();
  if (e.has_hello() && e.hello().host() == host_) r.pid = static_cast<pid_t>(e.hello().pid());
  if (e.has_step()) r.last_step = e.step().step();
  if (e.has_bye()) r.said_bye = true;
}

// What can be said of a quiet rank whose process this machine cannot see.
std::string RankWatch::remoteState(const std::string& host) {
  if (host.empty()) return "unknown: it never said hello";
  return "on host " + host +
         ", out of this machine's sight: its link to this machine is down, or the host froze";
}

void RankWatch::notStartedBefore(Clock::time_point now) {
  for (Watched& r : ranks_)
    if (!r.heard_any) r.last_heard = now;
}

pid_t RankWatch::pidOf(int rank) const {
  return rank >= 0 && rank < int(ranks_.size()) ? ranks_[size_t(rank)].pid : 0;
}

int64_t RankWatch::lastStepOf(int rank) const {
  return rank >= 0 && rank < int(ranks_.size()) ? ranks_[size_t(rank)].last_step : -1;
}

void RankWatch::killLiveRanks() const {
  for (const Watched& r : ranks_)
    if (r.pid > 0 && !r.said_bye && processState(r.pid) != "gone") ::kill(r.pid, SIGKILL);
}

bool RankWatch::anyNewlyQuiet(Clock::time_point now, Clock::duration limit) const {
  return std::any_of(ranks_.begin(), ranks_.end(), [&](const Watched& r) {
    return r.heard_any && !r.said_bye && !r.told_quiet && now - r.last_heard >= limit;
  });
}

std::vector<QuietChange> RankWatch::quietChanges(Clock::time_point now, Clock::duration limit) {
  std::vector<QuietChange> changes;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    Watched& r = ranks_[i];
    const bool quiet = r.heard_any && !r.said_bye && now - r.last_heard >= limit;
    if (quiet == r.told_quiet) continue;
    r.told_quiet = quiet;
    changes.push_back(
        {int(i), quiet, std::chrono::duration<double>(now - r.last_heard).count(), r.last_step});
  }
  return changes;
}

std::optional<RankFailure> RankWatch::check(Clock::time_point now) {
  std::optional<RankFailure> quietest;
  // Read once a check per process: a simulation's feeder sends for a thousand ranks.
  std::unordered_map<pid_t, std::string> states;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    Watched& r = ranks_[i];
    if (r.said_bye) continue;
    const double quiet_s = std::chrono::duration<double>(now - r.last_heard).count();
    RankFailure failure{static_cast<int>(i), false, r.last_step, quiet_s, "", !r.heard_any};
    if (r.pid > 0) {
      auto state = states.find(r.pid);
      if (state == states.end()) state = states.emplace(r.pid, processState(r.pid)).first;
      failure.process = state->second;
      if (failure.process == "gone") {
        if (!r.gone_since) r.gone_since = now;
        if (now - *r.gone_since >= kByeGrace) return failure;
        continue;
      }
    }
    const auto limit = r.heard_any ? hang_limit_ : std::max(hang_limit_, kStartupLimit);
    if (now - r.last_heard < limit) continue;
    failure.hung = true;
    if (r.pid <= 0) failure.process = remoteState(r.host);
    if (!quietest || failure.quiet_s > quietest->quiet_s) quietest = failure;
  }
  return quietest;
}

}  // namespace ranklab
