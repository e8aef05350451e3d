#include "launch/run_follower.h"

#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

namespace ranklab {

namespace {

bool sameRank(const RankRow& a, const RankRow& b) {
  return a.host == b.host && a.pid == b.pid && a.status == b.status &&
         a.exit_status == b.exit_status && a.train_ns == b.train_ns && a.seq_gaps == b.seq_gaps;
}

// What the launcher printed, at most the last `limit` bytes (an error before any run).
std::string tail(const std::string& text, size_t limit = 4000) {
  std::string t = text.size() > limit ? text.substr(text.size() - limit) : text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

}  // namespace

ConsoleLine parseConsoleLine(const std::string& line) {
  static const std::regex rank_line(R"(^  \[rank (\d+)( err)?\] (.*)$)");
  static const std::regex event_line(R"(^  \[[a-z-]+\] rank -?\d+: .*$)");
  std::smatch m;
  if (std::regex_match(line, event_line)) return {-1, true, line, true};
  // The launcher's own lines: progress, unless they say something went wrong.
  static const std::regex trouble(R"((^ranklab: )|(^run \d+ failed: )|(error|warning))");
  if (!std::regex_match(line, m, rank_line)) return {-1, std::regex_search(line, trouble), line};
  return {std::stoi(m[1].str()), m[2].matched, m[3].str()};
}

RunFollower::RunFollower(const std::string& db_path, LauncherIdentity launcher,
                         std::string console_path, std::vector<std::string> command)
    : store_(db_path),
      launcher_(std::move(launcher)),
      console_path_(std::move(console_path)),
      command_(std::move(command)) {}

RunFollower::RunFollower(const std::string& db_path, int64_t run_id, std::string console_path)
    : store_(db_path), console_path_(std::move(console_path)), run_id_(run_id) {
  if (auto who = store_.launcherOf(run_id)) launcher_ = *who;
  outcome_.run_id = run_id;
}

bool RunFollower::launcherGone() const {
  return !launcherMayLive(launcher_);
}

bool RunFollower::poll(RunObserver& observer) {
  readConsole(observer);
  if (run_id_ == 0 && !findRun(observer)) return outcome_.status.empty();
  auto run = store_.run(run_id_);
  if (!run) {
    outcome_.status = "failed";
    outcome_.error = store_.path() + ": run " + std::to_string(run_id_) + " was deleted";
    return false;
  }
  if (!announced_) {  // a run given by id (attach, take over) is told like one found
    announced_ = true;
    observer.onStarted(run_id_, command_);
  }
  if (run->status == "running" && launcherGone()) {
    store_.markLostRuns();  // its launcher died without finishing it: say so in the store
    run = store_.run(run_id_);
  }
  readEvents(observer);
  readRanks(observer);
  readSteps(observer);
  readEvals(observer);
  for (const ServerLoadRow& load : store_.serverLoadsAfter(run_id_, server_load_row_))
    observer.onServerLoad(load);
  if (run->status == "running") return true;
  finish(observer, *run);
  return false;
}

// The launcher creates its run once the job checks out; before that it may exit with the
// job's problems on its console.
bool RunFollower::findRun(RunObserver& observer) {
  const bool gone = launcherGone();  // asked first: a run created just before it exited counts
  if (auto id = store_.runLaunchedBy(launcher_)) {
    run_id_ = *id;
    outcome_.run_id = run_id_;
    return true;
  }
  if (!gone) return false;
  readConsole(observer);
  outcome_.status = "failed";
  outcome_.error = console_error_.empty() ? "the launcher (pid " + std::to_string(launcher_.pid) +
                                                ") exited without starting a run"
                                          : tail(console_error_);
  return false;
}

void RunFollower::readConsole(RunObserver& observer) {
  if (console_path_.empty()) return;
  std::ifstream file(console_path_, std::ios::binary);
  if (!file) return;
  file.seekg(console_offset_);
  std::string chunk((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  console_offset_ += static_cast<int64_t>(chunk.size());
  console_pending_ += chunk;
  size_t start = 0;
  for (size_t end; (end = console_pending_.find('\n', start)) != std::string::npos;
       start = end + 1) {
    const ConsoleLine line = parseConsoleLine(console_pending_.substr(start, end - start));
    if (line.echoes_event) continue;  // the event itself comes from the store
    if (line.rank < 0 && run_id_ == 0) console_error_ += line.text + "\n";
    const std::string failed = "run " + std::to_string(run_id_) + " failed: ";
    if (line.rank < 0 && run_id_ != 0 && line.text.rfind(failed, 0) == 0)
      console_error_ = line.text.substr(failed.size());
    observer.onOutput(line.rank, line.is_stderr, line.text);
  }
  console_pending_.erase(0, start);
}

void RunFollower::readEvents(RunObserver& observer) {
  const std::vector<EventRow> events = store_.events(run_id_);
  for (size_t i = events_seen_; i < events.size(); ++i) {
    const EventRow& e = events[i];
    if (e.kind == "restart")  // steps after its checkpoint were rolled back and come again
      for (auto& [rank, next] : next_step_) next = std::min(next, e.step + 1);
    observer.onEvent(e);
  }
  events_seen_ = std::max(events_seen_, events.size());
}

void RunFollower::readRanks(RunObserver& observer) {
  for (const RankRow& rank : store_.ranks(run_id_)) {
    auto seen = ranks_.find(rank.rank);
    if (seen != ranks_.end() && sameRank(seen->second, rank)) continue;
    ranks_[rank.rank] = rank;
    next_step_.emplace(rank.rank, 0);
    observer.onRank(rank);
  }
}

void RunFollower::readSteps(RunObserver& observer) {
  store_.forEachStepFrom(run_id_, next_step_, [&](const StepRow& step) {
    observer.onStep(step);
    next_step_[step.rank] = step.step + 1;  // the key exists: no node moves under the loop
  });
}

void RunFollower::readEvals(RunObserver& observer) {
  for (const EvalRow& eval : store_.evals(run_id_))
    if (evals_seen_.insert({eval.step, eval.rank}).second) observer.onEval(eval);
}

// The run's row says it ended: its last rows were stored before that, so one more read
// (already done by poll) has them all. The launcher prints why a run failed as it exits.
void RunFollower::finish(RunObserver& observer, const RunRow& run) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!launcherGone() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  readConsole(observer);
  if (console_pending_.size() > 0) {
    observer.onOutput(-1, true, console_pending_);
    console_pending_.clear();
  }
  outcome_.run_id = run_id_;
  outcome_.status = run.status;
  if (run.status != "done") {
    outcome_.error = console_error_;
    if (outcome_.error.empty()) {
      for (const EventRow& e : store_.events(run_id_))
        if (e.kind == "failure" || e.kind == "lost") outcome_.error = e.text;
    }
  }
  if (auto summary = store_.summary(run_id_)) observer.onFinished(*summary);
}

}  // namespace ranklab
