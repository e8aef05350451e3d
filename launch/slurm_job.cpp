#include "launch/slurm_job.h"

#include <fcntl.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <thread>

#include "launch/child_process.h"
#include "launch/private_dir.h"

namespace ranklab {

namespace {

using Clock = std::chrono::steady_clock;

struct CommandResult {
  int status = 0;
  std::string out;
  std::string err;  // its stderr lines, joined by "; "
};

// A Slurm client command, read without blocking and killed after `limit` (they retry a
// lost controller for 9 s or more: the launcher's loop must not wait on them for minutes).
class Command {
 public:
  Command(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
          std::chrono::seconds limit)
      : child_(argv, environment), deadline_(Clock::now() + limit) {}

  // True once it has ended (its result whole), reading what it wrote meanwhile.
  bool finished(int wait_ms = 0) {
    auto collect = [this](bool is_stderr, const std::string& line) {
      std::string& into = is_stderr ? result_.err : result_.out;
      into += (into.empty() ? "" : is_stderr ? "; " : "\n") + line;
    };
    child_.pump(wait_ms, collect);
    if (child_.running()) {
      if (Clock::now() > deadline_) child_.kill();
      return false;
    }
    for (int i = 0; i < 5; ++i) child_.pump(0, collect);
    result_.status = child_.exitCode();
    return true;
  }
  const CommandResult& result() const { return result_; }

 private:
  ChildProcess child_;
  Clock::time_point deadline_;
  CommandResult result_;
};

// Runs a Slurm client command to its end (killed after `limit`).
CommandResult runCommand(const std::vector<std::string>& argv,
                         const std::vector<std::string>& environment = {},
                         std::chrono::seconds limit = std::chrono::seconds(15)) {
  Command command(argv, environment, limit);
  while (!command.finished(20)) {
  }
  return command.result();
}

std::vector<std::string> showJob(const std::string& id) {
  return {"scontrol", "-o", "show", "job", id};
}

// The value of " KEY=value" in scontrol's one-line record ("" when absent).
std::string field(const std::string& line, const std::string& key) {
  const std::regex form("(?:^| )" + key + "=(\\S*)");
  std::smatch match;
  return std::regex_search(line, match, form) ? match[1].str() : std::string();
}

std::string shellQuoted(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

const char* const kEndedStates[] = {"COMPLETED",     "CANCELLED",    "FAILED",    "TIMEOUT",
                                    "NODE_FAIL",     "PREEMPTED",    "BOOT_FAIL", "DEADLINE",
                                    "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED",   "GONE"};

// The job's output file, once Slurm has made it: opened without following a link (the
// folder is this account's; a file put there by another would be refused).
FILE* openOutput(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return nullptr;
  return fdopen(fd, "r");
}

}  // namespace

bool SlurmJobState::ended() const {
  for (const char* s : kEndedStates)
    if (state == s) return true;
  return false;
}

bool SlurmJobState::started() const {
  return !state.empty() && state != "PENDING";
}

bool slurmCancelled(const SlurmJobState& s) {
  return s.state == "CANCELLED";
}

std::string slurmEndCause(const SlurmJobState& s) {
  const std::string on = s.nodes.empty() ? "" : " on " + s.nodes;
  if (s.state == "COMPLETED") return "";
  if (s.state == "CANCELLED") return "cancelled in Slurm (scancel)";
  if (s.state == "TIMEOUT") return "Slurm ended the job at its time limit (launch.time_limit)" + on;
  if (s.state == "NODE_FAIL") return "Slurm reports node " + s.nodes + " failed";
  if (s.state == "OUT_OF_MEMORY") return "Slurm ended the job out of memory" + on;
  if (s.state == "PREEMPTED") return "Slurm preempted the job" + on;
  if (s.state == "GONE") return "the job left Slurm's records before its end was read";
  return "Slurm ended the job " + s.state + (s.reason.empty() ? "" : " (" + s.reason + ")") + on +
         (s.exit_code.empty() ? "" : ", exit code " + s.exit_code);
}

std::optional<SlurmJobState> parseScontrolJob(const std::string& line) {
  SlurmJobState s;
  s.state = field(line, "JobState");
  if (s.state.empty()) return std::nullopt;
  s.reason = field(line, "Reason");  // one word on this line: Slurm writes its spaces as '_'
  if (s.reason == "None") s.reason.clear();
  std::replace(s.reason.begin(), s.reason.end(), '_', ' ');
  s.nodes = field(line, "NodeList");
  if (s.nodes == "(null)") s.nodes.clear();
  if (s.ended()) s.exit_code = field(line, "ExitCode");
  return s;
}

std::vector<std::string> sbatchArguments(const LaunchSpec& launch, int tasks,
                                         const std::string& job_name,
                                         const std::string& output_prefix) {
  std::vector<std::string> args{"sbatch",
                                "--parsable",
                                "--job-name=" + job_name,
                                "--ntasks=" + std::to_string(tasks),
                                "--output=" + output_prefix + "%j.out",
                                "--error=" + output_prefix + "%j.err",
                                "--no-requeue",
                                "--export=ALL"};
  if (launch.nodes > 0) args.push_back("--nodes=" + std::to_string(launch.nodes));
  if (!launch.partition.empty()) args.push_back("--partition=" + launch.partition);
  if (!launch.time_limit.empty()) args.push_back("--time=" + launch.time_limit);
  if (!launch.account.empty()) args.push_back("--account=" + launch.account);
  args.insert(args.end(), launch.sbatch.begin(), launch.sbatch.end());
  return args;
}

std::vector<std::string> shownSubmission(const LaunchSpec& launch, int tasks,
                                         const std::string& job_name,
                                         const std::string& output_prefix) {
  auto words = sbatchArguments(launch, tasks, job_name, output_prefix);
  words.push_back("<a batch script that runs:>");
  return words;
}

std::string batchScript(const std::vector<std::string>& command) {
  std::string line = "exec";
  for (const auto& word : command) line += " " + shellQuoted(word);
  return "#!/bin/sh\n# ranklab: the run's ranks, started by mpirun inside this allocation\n" +
         line + "\n";
}

SlurmJob::SlurmJob(const LaunchSpec& launch, int tasks, const std::string& job_name,
                   const std::vector<std::string>& command,
                   const std::vector<std::string>& environment, const std::string& output_dir) {
  // sbatch keeps its own copy of the script: the private folder can go when it returns.
  const PrivateDir scripts;
  const std::string script = scripts.write("ranklab-batch.sh", batchScript(command));
  const std::string prefix = output_dir + "/" + job_name + "-";
  auto argv = sbatchArguments(launch, tasks, job_name, prefix);
  argv.push_back(script);
  const CommandResult submitted = runCommand(argv, environment, std::chrono::seconds(60));
  static const std::regex job_id(R"(^(\d+)(;\S+)?$)");
  std::smatch match;
  if (submitted.status != 0 || !std::regex_match(submitted.out, match, job_id)) {
    throw SlurmRefused("sbatch refused the job (status " + std::to_string(submitted.status) +
                       "): " + (submitted.err.empty() ? submitted.out : submitted.err));
  }
  id_ = match[1];
  out_.path = prefix + id_ + ".out";
  err_.path = prefix + id_ + ".err";
  state_.state = "PENDING";
}

SlurmJob::SlurmJob(std::string id, const std::string& output_dir, const std::string& job_name)
    : id_(std::move(id)) {
  const std::string prefix = output_dir + "/" + job_name + "-" + id_;
  out_.path = prefix + ".out";
  err_.path = prefix + ".err";
  for (OutputFile* file : {&out_, &err_}) {
    std::error_code error;  // what the gone launcher showed is not shown again
    const auto size = std::filesystem::file_size(file->path, error);
    if (!error) file->offset = static_cast<long>(size);
  }
  poll(true);
}

struct SlurmJob::Query {
  explicit Query(const std::string& id) : command(showJob(id), {}, std::chrono::seconds(15)) {}
  Command command;
};

SlurmJob::~SlurmJob() = default;

void SlurmJob::poll(bool at_once) {
  if (state_.ended()) return;
  if (query_) {
    if (!query_->command.finished()) return;
    const CommandResult& shown = query_->command.result();
    apply(shown.status, shown.out, shown.err);
    query_.reset();
    return;
  }
  const auto now = Clock::now();
  if (at_once && answering_) {
    const CommandResult shown = runCommand(showJob(id_));
    apply(shown.status, shown.out, shown.err);
    last_poll_ = now;
  } else if (now - last_poll_ >= kPollInterval) {
    query_ = std::make_unique<Query>(id_);
    last_poll_ = now;
  }
}

void SlurmJob::apply(int status, const std::string& out, const std::string& err) {
  SlurmJobState next = state_;
  const auto parsed = parseScontrolJob(out);
  const bool purged = err.find("Invalid job id") != std::string::npos;
  if (parsed) next = *parsed;
  if (!parsed && purged) next.state = "GONE";  // purged before a poll saw its end (MinJobAge)
  // Anything else (a controller not answering) keeps the last state: asked again next poll.
  answering_ = parsed || purged || status == 0;
  changed_ = changed_ || !(next == state_);
  state_ = next;
}

bool SlurmJob::takeChange() {
  const bool changed = changed_;
  changed_ = false;
  return changed;
}

bool SlurmJob::readNew(OutputFile& file, bool is_stderr, const LineHandler& on_line) {
  FILE* f = openOutput(file.path);
  if (!f) return false;
  bool read_any = false;
  if (fseek(f, file.offset, SEEK_SET) == 0) {
    char buffer[65536];
    size_t n = 0;
    while ((n = fread(buffer, 1, sizeof buffer, f)) > 0) {
      file.pending.append(buffer, n);
      file.offset += static_cast<long>(n);
      read_any = true;
    }
  }
  fclose(f);
  size_t start = 0, end = 0;
  while ((end = file.pending.find('\n', start)) != std::string::npos) {
    on_line(is_stderr, file.pending.substr(start, end - start));
    start = end + 1;
  }
  file.pending.erase(0, start);
  // Once the job has ended nothing more comes: an unterminated last line is whole.
  if (state_.ended() && !file.pending.empty()) {
    on_line(is_stderr, file.pending);
    file.pending.clear();
  }
  return read_any;
}

void SlurmJob::pump(int wait_ms, const LineHandler& on_line) {
  const bool out = readNew(out_, false, on_line);
  const bool err = readNew(err_, true, on_line);
  if (!out && !err && wait_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
}

bool SlurmJob::running() {
  poll();
  return !state_.ended();
}

int SlurmJob::exitCode() const {
  const auto colon = state_.exit_code.find(':');
  if (colon == std::string::npos) return state_.state == "COMPLETED" ? 0 : 1;
  const int signal = std::atoi(state_.exit_code.c_str() + colon + 1);
  return signal > 0 ? 128 + signal : std::atoi(state_.exit_code.c_str());
}

void SlurmJob::terminate() {
  poll(true);  // cancelled by hand a moment ago, or ending: its end is not this launcher's
  if (state_.ended() || state_.state == "COMPLETING") return;
  cancelled_here_ = true;
  runCommand({"scancel", id_});
}

void SlurmJob::kill() {
  runCommand({"scancel", "--signal=KILL", "--full", id_});
}

}  // namespace ranklab
