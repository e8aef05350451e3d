// The `ranklab` CLI end to end: real mpirun, real ranks, a real run store file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/integration/cli_runner.h"
#include "tests/support/process_lookup.h"

namespace {

namespace fs = std::filesystem;

using ranklab::testing::lastJson;
using ranklab::testing::sourceDir;

ranklab::testing::CliResult run(const std::string& args, const std::string& prefix = "") {
  return ranklab::testing::runCli(args, prefix);
}

// The runs this test started in the background.
std::vector<pid_t>& launched() {
  static std::vector<pid_t> pids;
  return pids;
}

void stopLaunchedRuns();

class Cli : public ranklab::testing::CliTest {
 protected:
  void TearDown() override { stopLaunchedRuns(); }
  std::string file(const std::string& name, const std::string& text) const {
    const auto path = folder_.file(name);
    std::ofstream(path) << text;
    return path;
  }
};

// The issue's acceptance run: 4 ranks, 2 epochs, >= 0.85 test accuracy, steps from every rank.
TEST_F(Cli, QuickstartOnFourRanksReachesTheTargetAccuracy) {
  const auto r = run("run " + quickstart() + " --ranks 4 --quiet --db " + db());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto shown = run("runs show 1 --json --db " + db());
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  const auto s = nlohmann::json::parse(shown.out);
  std::printf("quickstart 4 ranks: test accuracy %.4f, %.0f samples/s, wall %.1f s\n",
              s["test_accuracy"].get<double>(), s["samples_per_s"].get<double>(),
              s["wall_s"].get<double>());
  EXPECT_EQ(s["status"], "done");
  EXPECT_EQ(s["world"], 4);
  EXPECT_EQ(s["strategy"], "allreduce");
  EXPECT_EQ(s["algorithm"], "ring");
  EXPECT_EQ(s["codec"], "none");
  EXPECT_EQ(s["amp"], "fp32");
  EXPECT_EQ(s["epochs"], 2);
  EXPECT_EQ(s["layout"]["data"], 4);
  EXPECT_EQ(s["layout"]["schedule"], "data-parallel");
  EXPECT_TRUE(s["bubble_fraction"].is_null());
  EXPECT_GE(s["test_accuracy"].get<double>(), 0.85);
  EXPECT_GT(s["samples_per_s"].get<double>(), 0);
  EXPECT_GT(s["wall_s"].get<double>(), s["train_s"].get<double>());
  ASSERT_EQ(s["ranks"].size(), 4u);
  for (const auto& rank : s["ranks"]) {
    EXPECT_EQ(rank["steps"], s["steps"]) << rank.dump();
    EXPECT_GT(rank["bytes_tx"].get<int64_t>(), 0);
    EXPECT_GT(rank["comm_s"].get<double>(), 0);
    EXPECT_GT(rank["compute_s"].get<double>(), 0);
  }
  EXPECT_EQ(s["steps"].get<int64_t>(), 2 * (60000 / 4 / 64));
  EXPECT_EQ(s["samples"].get<int64_t>(), 4 * s["steps"].get<int64_t>() * 64);
}

// A run's console is progress, events that matter and the summary: each rank's set-up
// detail (activations per layer, traffic formulas) and the tables per group and per layer are
// left to `runs show` and --verbose (issue 61: the quickstart printed four lines of bytes).
TEST_F(Cli, ARunsConsoleLeavesEachRanksDetailToRunsShowAndVerbose) {
  const std::string tiny =
      " --ranks 2 --set data.train_limit=1280 --set data.test_limit=200"
      " --set train.epochs=1 --db " +
      db();
  const auto plain = run("run " + quickstart() + tiny);
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  EXPECT_EQ(plain.out.find("[activations]"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("[traffic]"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("activations kept for backward"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("per layer: ranklab runs show 1"), std::string::npos) << plain.out;
  const auto shown = run("runs show 1 --db " + db());
  EXPECT_NE(shown.out.find("activations kept for backward per layer"), std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("MB sent per step"), std::string::npos) << shown.out;
  const auto verbose = run("run " + quickstart() + tiny + " --verbose");
  ASSERT_EQ(verbose.exit_code, 0) << verbose.out;
  EXPECT_NE(verbose.out.find("[activations] rank 1:"), std::string::npos) << verbose.out;
  EXPECT_NE(verbose.out.find("activations kept for backward per layer"), std::string::npos)
      << verbose.out;
}

TEST_F(Cli, MpiAlgorithmWithOverridesAndJsonOutput) {
  const auto r = run("run " + quickstart() +
                     " --ranks 2 --set parallel.algorithm=mpi --set data.train_limit=6400"
                     " --set data.test_limit=1000 --set train.epochs=1 --quiet --json --db " +
                     db());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto s = lastJson(r.out);
  EXPECT_EQ(s["algorithm"], "mpi");
  EXPECT_EQ(s["world"], 2);
  EXPECT_EQ(s["steps"], 6400 / 2 / 64);
  const auto list = run("runs list --json --db " + db());
  ASSERT_EQ(list.exit_code, 0) << list.out;
  EXPECT_EQ(nlohmann::json::parse(list.out).size(), 1u);
}

TEST_F(Cli, ValidateNamesLineKeyAndAllowedValues) {
  const auto job =
      file("bad.toml", "[train]\nepochs = 2\nbatchsize = 64\n\n[parallel]\nalgorithm = \"tree\"\n");
  const auto r = run("validate " + job + " --db " + db());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("bad.toml:3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("train.batchsize"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("batch_size"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bad.toml:6"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ring, mpi, hierarchical"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(db())) << "validate must not create a run";
}

// train.device = "cuda": refused with the reason and nothing stored where no GPU can be
// used; where one can, each Fashion-MNIST data-parallel preset trains on it, one rank, 40
// steps, to the end.
TEST_F(Cli, GpuJobsRunWhereAGpuIsAndAreRefusedWithTheReasonWhereNone) {
  const auto check = run("validate " + quickstart() + " --set train.device=cuda");
  if (check.exit_code != 0) {
    EXPECT_EQ(check.exit_code, 2) << check.out;
    EXPECT_NE(check.out.find("train.device: \"cuda\" needs a GPU, but "), std::string::npos)
        << check.out;
    const auto r = run("run " + quickstart() + " --set train.device=cuda --quiet --db " + db());
    EXPECT_EQ(r.exit_code, 2) << r.out;
    const auto listed = run("runs list --json --db " + db());
    EXPECT_EQ(nlohmann::json::parse(listed.out).size(), 0u) << listed.out;
    return;
  }
  int id = 0;
  for (const std::string preset : {"quickstart", "fashion-mlp", "fashion-cnn"}) {
    const std::string job = sourceDir() + "/resources/jobs/" + preset + ".toml";
    const auto r = run("run " + job +
                       " --ranks 1 --set train.device=cuda --set train.max_steps=40"
                       " --set data.train_limit=3200 --set data.test_limit=1000 --quiet --db " +
                       db());
    EXPECT_EQ(r.exit_code, 0) << preset << "\n" << r.out;
    const auto shown = nlohmann::json::parse(
        run("runs show " + std::to_string(++id) + " --json --db " + db()).out);
    EXPECT_EQ(shown["status"], "done") << preset;
    EXPECT_GT(shown["test_accuracy"].get<double>(), 0.3) << preset;
  }
}

TEST_F(Cli, ValidAJobPassesValidate) {
  const auto r = run("validate " + quickstart());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("valid"), std::string::npos) << r.out;
}

TEST_F(Cli, MissingDatasetFailsClearlyAndTheRunIsKept) {
  const auto r = run("run " + quickstart() +
                     " --ranks 2 --set data.path=/nonexistent/fmnist --quiet --db " + db());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("/nonexistent/fmnist/train-images-idx3-ubyte.gz"), std::string::npos)
      << r.out;
  const auto shown = run("runs show 1 --json --db " + db());
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  EXPECT_EQ(nlohmann::json::parse(shown.out)["status"], "failed");
}

using ranklab::testing::startInBackground;

// Steps stored so far for run 1, or -1 while the run is not there yet.
int64_t storedSteps(const std::string& db) {
  const auto shown = run("runs show 1 --json --db " + db);
  if (shown.exit_code != 0) return -1;
  return nlohmann::json::parse(shown.out)["steps"].get<int64_t>();
}

// Starts a run that would last minutes on any CPU (throttled: 46,800 steps of 2 ms at least,
// not only many epochs, which a fast CPU ends early and a loaded one spends its cores on);
// returns its pid once it has stored steps, or -1 (with the reason on stderr) when it ended or
// stored nothing within two minutes.
pid_t startLongRunWithSteps(const std::string& db, const std::string& log,
                            const std::vector<std::string>& extra = {}) {
  const std::string job = sourceDir() + "/resources/jobs/quickstart.toml";
  std::vector<std::string> args{"run",     job,
                                "--ranks", "2",
                                "--set",   "train.epochs=100",
                                "--set",   "fault.straggler_rank=1",
                                "--set",   "fault.straggler_delay_ms=2",
                                "--quiet", "--db",
                                db};
  args.insert(args.end(), extra.begin(), extra.end());
  const pid_t pid = startInBackground(args, log);
  launched().push_back(pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (pid > 0 && storedSteps(db) <= 0) {
    int status = 0;
    const bool ended = waitpid(pid, &status, WNOHANG) == pid;
    if (ended || std::chrono::steady_clock::now() > deadline) {
      std::ifstream in(log);
      std::fprintf(stderr, "the long run %s before storing a step; its output:\n%s\n",
                   ended ? "ended" : "stored nothing in 120 s",
                   std::string(std::istreambuf_iterator<char>(in), {}).c_str());
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return pid;
}

// Stops and reaps every run a test started that is still going (Ctrl-C, then SIGKILL): a
// failed assertion used to leave a 100-epoch run loading the machine for the whole suite.
void stopLaunchedRuns() {
  for (const pid_t pid : launched()) {
    if (pid <= 0 || waitpid(pid, nullptr, WNOHANG) != 0) continue;  // reaped or gone
    kill(pid, SIGINT);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (waitpid(pid, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  launched().clear();
}

// The pid of one ranklab-worker of the run `launcher` started, 0 if none. The launcher's job
// file is named after its pid; mpirun's command line is not a worker's.
int firstWorkerOf(pid_t launcher) {
  const auto workers = ranklab::testing::processesMatching("^[^ ]*ranklab-worker --job .*ranklab-" +
                                                           std::to_string(launcher) + "-");
  return workers.empty() ? 0 : workers.front();
}

TEST_F(Cli, InterruptStopsTheRanksAndKeepsWhatTheyReported) {
  // Ctrl-C once steps are being stored, in a job that would run for minutes.
  const pid_t pid = startLongRunWithSteps(db(), folder_.file("run.log"));
  ASSERT_GT(pid, 0);
  const auto interrupted = std::chrono::steady_clock::now();
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  const double stop_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - interrupted).count();
  std::ifstream log(folder_.file("run.log"));
  const std::string out((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 130) << "128 + SIGINT, as shells expect\n" << out;
  const auto shown = run("runs show 1 --json --db " + db());
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  const auto s = nlohmann::json::parse(shown.out);
  EXPECT_EQ(s["status"], "stopped");
  EXPECT_GT(s["steps"].get<int64_t>(), 0) << "steps recorded before the stop were lost";
  EXPECT_GT(s["samples_per_s"].get<double>(), 0) << "a stopped run still has a rate";
  EXPECT_LT(stop_s, 15.0) << "stop did not end the ranks promptly";
}

TEST_F(Cli, UnknownRunAndUnknownCommandAreClearErrors) {
  run("runs list --db " + db());
  const auto missing = run("runs show 42 --db " + db());
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.out.find("no run with id 42"), std::string::npos) << missing.out;
  const auto unknown = run("frobnicate");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.out.find("allowed: run, watch, resume, validate, simulate, calibrate, plan, "
                             "runs, compare, import, "
                             "analyze, diff, bench, version"),
            std::string::npos)
      << unknown.out;
}

// Issue 33, item 3: a run whose test loss went NaN was stored with test loss 0 and ranked
// best. Now it is "diverged" in the summary, the JSON and the comparison.
TEST_F(Cli, ADivergedRunIsShownDivergedNeverWithLossZero) {
  const std::string spirals = sourceDir() + "/resources/jobs/spirals.toml";
  // Six narrow layers blow up in a second of SGD at lr 10 (two wide ones took 12 GB of traffic).
  const auto r = run("run " + spirals +
                     " --set train.epochs=1 --set train.optimizer='\"sgd\"' --set train.lr=10"
                     " --set train.momentum=0.99 --set 'model.layers=[64,64,64,64,64,64]'"
                     " --quiet --db " +
                     db());
  EXPECT_NE(r.out.find("test loss diverged (not finite)"), std::string::npos) << r.out;
  const auto shown = run("runs show 1 --json --db " + db());
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  const auto json = nlohmann::json::parse(shown.out);
  EXPECT_EQ(json["diverged"], true);
  EXPECT_TRUE(json["test_loss"].is_null()) << json["test_loss"];
  const auto fine = run("run " + spirals + " --set train.epochs=1 --quiet --db " + db());
  ASSERT_EQ(fine.exit_code, 0) << fine.out;
  const auto compared = run("compare 1 2 --db " + db());
  EXPECT_NE(compared.out.find("diverged (not finite)"), std::string::npos) << compared.out;
}

// Issue 33, item 9: what used to be ignored or misread is refused, naming what is wrong.
TEST_F(Cli, StrayWordsEmptyStoresAndControlCharactersAreRefused) {
  const auto verb = run("runs frob --db " + db());
  EXPECT_EQ(verb.exit_code, 2);
  EXPECT_NE(verb.out.find("unknown runs verb \"frob\" (allowed: list, show,"), std::string::npos)
      << verb.out;
  const auto extra = run("validate " + quickstart() + " " + quickstart());
  EXPECT_EQ(extra.exit_code, 2);
  EXPECT_NE(extra.out.find("validate: unexpected argument"), std::string::npos) << extra.out;
  const auto list = run("runs list extra --db " + db());
  EXPECT_EQ(list.exit_code, 2);
  EXPECT_NE(list.out.find("runs list: unexpected argument \"extra\""), std::string::npos)
      << list.out;
  const auto empty_db = run("runs list --db ''");
  EXPECT_EQ(empty_db.exit_code, 2);
  EXPECT_NE(empty_db.out.find("--db: the path is empty"), std::string::npos) << empty_db.out;
  const auto escape = run("validate " + quickstart() + " --set 'name=\"\\u001b[31mRED\"'");
  EXPECT_EQ(escape.exit_code, 2);
  EXPECT_NE(escape.out.find("must not contain control characters (\\x1b at offset 0)"),
            std::string::npos)
      << escape.out;
}

// Text from a trace's file name and the store (a name not UTF-8, an ESC) reached the terminal
// raw, and one such name made every `runs list --json` fail (issue 57, items 13 and 14).
TEST_F(Cli, TextFromFilesAndTheStoreReachesNoTerminalRawAndJsonStaysValid) {
  const std::string traces = folder_.file("traces");
  std::filesystem::create_directories(traces);
  const std::string odd = traces + "/r\xff\x1b[31mED.json";
  std::filesystem::copy_file(sourceDir() + "/tests/fuzz/corpus/trace/kineto-nccl.json", odd);
  const auto imported = run("import '" + odd + "' --db " + db());
  ASSERT_EQ(imported.exit_code, 0) << imported.out;
  const std::string stepless = traces + "/\x1b]0;title\x07.json";
  std::ofstream(stepless) << R"({"traceEvents": [{"ph": "X", "name": "\u001b[2J", "ts": 1,
                               "dur": 1, "pid": 1, "tid": 1}]})";
  const auto refused = run("import '" + stepless + "' --db " + db());
  EXPECT_NE(refused.exit_code, 0) << refused.out;
  for (const auto& r : {imported, refused, run("runs list --db " + db()),
                        run("runs show 1 --db " + db()), run("analyze 1 --db " + db())}) {
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\x07'), std::string::npos) << r.out;
  }
  const auto listed = run("runs list --json --db " + db());
  ASSERT_EQ(listed.exit_code, 0) << listed.out;
  const size_t start = listed.out.find('[');
  ASSERT_NE(start, std::string::npos) << listed.out;
  const size_t note = listed.out.find("ranklab: note:");
  ASSERT_NE(note, std::string::npos) << listed.out;
  const nlohmann::json runs = nlohmann::json::parse(listed.out.substr(start, note - start));
  EXPECT_NE(runs[0]["name"].get<std::string>().find("\\xff"), std::string::npos) << runs;
  EXPECT_NE(listed.out.find("is not UTF-8"), std::string::npos) << listed.out;
  const auto renamed = run("runs rename 1 \"$(printf 'bad\\377')\" --db " + db());
  EXPECT_EQ(renamed.exit_code, 2) << renamed.out;
  EXPECT_NE(renamed.out.find("the new name is not UTF-8 (\\xff at offset 3)"), std::string::npos)
      << renamed.out;
  const auto tagged = run("runs tag 1 \"$(printf '\\033[31mred')\" --db " + db());
  EXPECT_EQ(tagged.exit_code, 2) << tagged.out;
  EXPECT_NE(tagged.out.find("must not contain control characters (\\x1b at offset 0)"),
            std::string::npos)
      << tagged.out;
}

// Issue 57, items 5 and 6: `validate /dev/zero` read 7 GB and grew, `run` ended in a bare
// std::bad_alloc, a FIFO blocked for ever; train.resume_from=/dev/zero failed each rank with
// std::bad_alloc. Each is now refused within seconds, naming the file and why.
TEST_F(Cli, JobFilesCheckpointsAndTracesFromDevicesOrFifosAreRefusedNamingThem) {
  const std::string fifo = folder_.file("pipe.toml");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string device = "/dev/zero: is a character device, not a regular file";
  const std::string pipe = fifo + ": is a FIFO (a named pipe), not a regular file";
  const std::pair<std::string, std::string> cases[] = {
      {"validate /dev/zero", device},
      {"validate " + fifo, pipe},
      {"run /dev/zero --quiet --db " + db(), device},
      {"run " + fifo + " --quiet --db " + db(), pipe},
      {"import " + fifo + " --db " + db(), pipe}};
  for (const auto& [args, expected] : cases) {
    const auto r = run(args, "timeout 10 ");
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.exit_code, 124) << args << ": still reading after 10 s";
    EXPECT_NE(r.out.find(expected), std::string::npos) << args << ": " << r.out;
  }
  const std::string spirals = sourceDir() + "/resources/jobs/spirals.toml";
  const auto resumed = run(
      "run " + spirals + " --ranks 2 --set train.resume_from='\"/dev/zero\"' --quiet --db " + db(),
      "timeout 60 ");
  EXPECT_NE(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find(device), std::string::npos) << resumed.out;
  EXPECT_EQ(resumed.out.find("bad_alloc"), std::string::npos) << resumed.out;
}

// --ranks 0, -3 or "4x" used to be dropped silently and the job file's ranks ran instead.
TEST_F(Cli, BadRanksOptionIsAnErrorNotIgnored) {
  for (const std::string n : {"0", "-3", "70000"}) {
    const auto r = run("validate " + quickstart() + " --ranks " + n);
    EXPECT_EQ(r.exit_code, 2) << n << ": " << r.out;
    EXPECT_NE(r.out.find("parallel.ranks: must be 1..65536, got " + n), std::string::npos) << r.out;
  }
  const auto trailing = run("validate " + quickstart() + " --ranks 4x");
  EXPECT_EQ(trailing.exit_code, 2) << trailing.out;
  EXPECT_NE(trailing.out.find("--ranks: \"4x\" is not a number (allowed: 1..65536)"),
            std::string::npos)
      << trailing.out;
}

// --worlds 1000 used to start 1000 ranks; an empty list ran nothing and exited 0.
TEST_F(Cli, BenchRejectsHugeOrEmptyWorldListsAndBatchLengthsOutOfRange) {
  const auto huge = run("bench allreduce --worlds 1000", "timeout 20 ");
  EXPECT_EQ(huge.exit_code, 2) << huge.out;
  EXPECT_NE(huge.out.find("--worlds takes an integer 1..256, got \"1000\""), std::string::npos)
      << huge.out;
  for (const std::string flag : {"--worlds", "--algorithms"}) {
    const auto empty = run("bench allreduce " + flag + " ,", "timeout 20 ");
    EXPECT_EQ(empty.exit_code, 2) << empty.out;
    EXPECT_NE(empty.out.find(flag + " takes a comma-separated list, got \",\""), std::string::npos)
        << empty.out;
  }
  for (const std::string seconds : {"0", "61", "0.1s"}) {
    const auto bad = run("bench allreduce --seconds " + seconds, "timeout 20 ");
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    EXPECT_NE(bad.out.find("--seconds takes seconds > 0 and <= 60, got \"" + seconds + "\""),
              std::string::npos)
        << bad.out;
  }
}

// An unknown algorithm (or shm-sharded, a training algorithm) used to start the ranks, which
// aborted with nothing but mpirun's MPI_ABORT notice.
TEST_F(Cli, BenchRejectsAlgorithmsThatAreNotAllreduces) {
  for (const std::string algorithm : {"bogus", "shm-sharded"}) {
    const auto r = run("bench allreduce --worlds 2 --algorithms ring," + algorithm, "timeout 20 ");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("--algorithms: unknown all-reduce algorithm \"" + algorithm + "\""),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("allowed: ring, mpi, hierarchical, shm, naive"), std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("MPI_ABORT"), std::string::npos) << r.out;
  }
}

// Ctrl-C on `bench` used to kill the CLI only: mpirun (its own process group) and the ranks
// ran on. A --min-bytes no other run uses marks this run's processes.
TEST_F(Cli, InterruptedBenchStopsItsRanks) {
  const std::string marker = "--min-bytes " + std::to_string(8 + 4 * (getpid() % 4096));
  const auto r = run("bench allreduce --worlds 2 " + marker + " --max-bytes 64M --repeats 3",
                     "timeout -s INT 4 ");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("interrupted; the ranks were stopped"), std::string::npos) << r.out;
  // mpirun and the ranks carry the marker; the CLI and timeout that passed it on have exited.
  EXPECT_EQ(ranklab::testing::processesMatching(marker + " ").size(), 0u)
      << "ranks still running after the interrupt";
}

// Deleting a run while it ran used to end the launcher with a bare "upsert rank: FOREIGN
// KEY constraint failed".
TEST_F(Cli, RunDeletedWhileRunningIsNamedAndItsRanksStop) {
  const pid_t pid = startLongRunWithSteps(db(), folder_.file("run.log"));
  ASSERT_GT(pid, 0);
  const auto deleted = run("runs delete 1 --db " + db());
  ASSERT_EQ(deleted.exit_code, 0) << deleted.out;
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream log(folder_.file("run.log"));
  const std::string out((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_NE(out.find(db() + ": run 1 was deleted from the store while it ran"), std::string::npos)
      << out;
}

// Open MPI's shared-memory segment files (4 MB each, in /dev/shm) are unlinked by the rank
// that made them, so a rank killed with SIGKILL left its file behind for good. They now live
// in a folder of the run's own, which the launcher removes whatever the ending.
TEST_F(Cli, KilledRankLeavesNoSharedMemorySegmentsBehind) {
  const pid_t pid = startLongRunWithSteps(db(), folder_.file("run.log"));
  ASSERT_GT(pid, 0);
  const std::string prefix = "ranklab-" + std::to_string(pid) + "-";
  std::vector<std::filesystem::path> folders;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm"))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) folders.push_back(entry.path());
  ASSERT_EQ(folders.size(), 1u) << "no segment folder of this run in /dev/shm";
  size_t segments = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folders[0]))
    segments += entry.path().filename().string().rfind("vader_segment", 0) == 0;
  EXPECT_EQ(segments, 2u) << "the ranks' segments are not in the run's folder";
  const int worker = firstWorkerOf(pid);
  ASSERT_GT(worker, 0);
  kill(worker, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_FALSE(std::filesystem::exists(folders[0])) << folders[0] << " left behind";
}

// A rank that is alive but frozen (SIGSTOP) used to keep the run "running" for ever: the
// others block in the all-reduce and nobody reports. The launcher's silence limit ends it.
TEST_F(Cli, FrozenRankEndsTheRunAfterTheSilenceLimit) {
  const pid_t pid = startLongRunWithSteps(db(), folder_.file("run.log"),
                                          {"--set", "telemetry.silence_limit_s=3"});
  ASSERT_GT(pid, 0);
  const int worker = firstWorkerOf(pid);
  ASSERT_GT(worker, 0);
  kill(worker, SIGSTOP);
  const auto frozen = std::chrono::steady_clock::now();
  int status = 0;
  waitpid(pid, &status, 0);
  const double end_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - frozen).count();
  kill(worker, SIGKILL);  // in case the launcher left it behind
  std::ifstream log(folder_.file("run.log"));
  const std::string out((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_NE(out.find("telemetry.silence_limit_s"), std::string::npos) << out;
  EXPECT_LT(end_s, 30.0) << "the silent run was not ended promptly";
  const auto shown = run("runs show 1 --json --db " + db());
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  const auto s = nlohmann::json::parse(shown.out);
  EXPECT_EQ(s["status"], "failed");
  EXPECT_GT(s["steps"].get<int64_t>(), 0) << "steps recorded before the freeze were lost";
}

}  // namespace
