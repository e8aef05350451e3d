// Automatic restarts (train.max_restarts) on 4 real mpirun ranks: a rank killed (or hung)
// mid-run makes the launcher restart the whole world from the run's last checkpoint; the run
// stays one run, finishes `done`, and trains exactly as a run that never failed (the
// checkpoint resumes bit for bit), with each failure, restart and resumption an event.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>

#include "storage/run_store.h"
#include "tests/integration/cli_runner.h"
#include "tests/support/process_lookup.h"

namespace {

using ranklab::testing::cliPath;
using ranklab::testing::runCli;

class Restarts : public ranklab::testing::CliTest {
 protected:
  // 4 ranks, 100 steps each, a checkpoint every 15 steps; `faults` appended as written.
  std::string job(const std::string& faults) {
    const std::string path = folder_.file("job.toml");
    std::ofstream(path) << "name = \"restart\"\n[data]\ndataset = \"fashion-mnist\"\n"
                           "train_limit = 12800\ntest_limit = 1000\n[model]\nlayers = [64]\n"
                           "[train]\nepochs = 1\nbatch_size = 32\ncheckpoint_every = 15\n"
                           "checkpoint_path = \""
                        << folder_.file("run.ckpt") << "\"\n[parallel]\nranks = 4\n"
                        << "[telemetry]\nhang_limit_s = 3\n"
                        << faults;
    return path;
  }

  ranklab::testing::CliResult run(const std::string& job_file, const std::string& args) {
    return runCli("run " + job_file + " --quiet --db " + db() + " " + args);
  }

  // Every rank's loss at every step of run `id`.
  std::map<std::pair<int, int64_t>, double> losses(int64_t id) {
    ranklab::RunStore store(db());
    std::map<std::pair<int, int64_t>, double> by_step;
    for (const auto& s : store.steps(id)) by_step[{s.rank, s.step}] = s.loss;
    return by_step;
  }

  std::map<std::string, int> eventCounts(int64_t id) {
    ranklab::RunStore store(db());
    std::map<std::string, int> counts;
    for (const auto& e : store.events(id)) ++counts[e.kind];
    return counts;
  }
};

const char* kKillRank2AfterStep40 = "[[faults]]\nrank = 2\nat_step = 40\naction = \"kill\"\n";

TEST_F(Restarts, AKilledRankIsRestartedFromTheCheckpointAndTrainsAsIfNothingHappened) {
  const auto clean = run(job(""), "");
  ASSERT_EQ(clean.exit_code, 0) << clean.out;
  const auto restarted = run(job(kKillRank2AfterStep40), "--max-restarts 1");
  ASSERT_EQ(restarted.exit_code, 0) << restarted.out;

  ranklab::RunStore store(db());
  ASSERT_EQ(store.summary(2)->run.status, "done");
  const auto counts = eventCounts(2);
  EXPECT_EQ(counts.count("failure") ? counts.at("failure") : 0, 1);
  EXPECT_EQ(counts.count("restart") ? counts.at("restart") : 0, 1);
  EXPECT_EQ(counts.count("resumed") ? counts.at("resumed") : 0, 1);
  for (const auto& e : store.events(2)) {
    if (e.kind == "restart") {
      // Checkpoints at 15 and 30; the kill after 40: steps 31..40 of 4 ranks rolled back.
      EXPECT_TRUE(std::regex_search(
          e.text, std::regex(R"(restart 1 of 1: every rank again from the checkpoint at step 30 )"
                             R"(\(.*run\.ckpt\); 40 step rows after it rolled back)")))
          << e.text;
      EXPECT_EQ(e.rank, 2);
      EXPECT_EQ(e.step, 30);
    }
    if (e.kind == "resumed") {
      std::smatch m;
      ASSERT_TRUE(std::regex_search(
          e.text, m, std::regex(R"(training resumed at step 31, ([0-9.]+) s after the failure)")))
          << e.text;
      std::printf("detect -> resumed training: %s s\n", m[1].str().c_str());
    }
  }
  // Every step once per rank, and the same losses bit for bit as the run that never failed.
  const auto expected = losses(1), got = losses(2);
  ASSERT_EQ(got.size(), expected.size());
  ASSERT_EQ(got.size(), 400u);
  for (const auto& [key, loss] : expected)
    ASSERT_EQ(got.at(key), loss) << "rank " << key.first << " step " << key.second;
  EXPECT_EQ(store.summary(2)->test_accuracy, store.summary(1)->test_accuracy);
}

TEST_F(Restarts, AHungRankIsRestartedToo) {
  const auto r =
      run(job("[[faults]]\nrank = 1\nat_step = 20\naction = \"stop\"\n"), "--max-restarts 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(rank 1 hung after step 20)"))) << r.out;
  ranklab::RunStore store(db());
  EXPECT_EQ(store.summary(1)->run.status, "done");
  EXPECT_EQ(eventCounts(1).at("restart"), 1);
  EXPECT_EQ(losses(1).size(), 400u);
}

// A fault in every attempt: the restarts run out and the run fails, naming each failure.
TEST_F(Restarts, WhenTheRestartsRunOutTheRunFails) {
  const auto r = run(job(std::string(kKillRank2AfterStep40) +
                         "[[faults]]\nrank = 0\nat_step = 35\naction = \"exit\"\nattempt = 1\n"),
                     "--max-restarts 1");
  EXPECT_NE(r.exit_code, 0) << r.out;
  ranklab::RunStore store(db());
  EXPECT_EQ(store.summary(1)->run.status, "failed");
  const auto counts = eventCounts(1);
  EXPECT_EQ(counts.at("failure"), 2);
  EXPECT_EQ(counts.at("restart"), 1);
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(rank 0 died after step 35 \(exit code 3\))")))
      << r.out;
  // What the second attempt trained before it failed is kept: steps 1..35 on every rank.
  EXPECT_EQ(losses(1).size(), 4u * 35u);
}

TEST_F(Restarts, MaxRestartsWithoutCheckpointsIsRefusedNamingTheKey) {
  const std::string path = folder_.file("bare.toml");
  std::ofstream(path) << "[train]\nmax_restarts = 2\n";
  const auto r = runCli("validate " + path);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("train.max_restarts"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("train.checkpoint_every > 0"), std::string::npos) << r.out;

  std::ofstream(path) << "[train]\nelastic = true\n[parallel]\nstrategy = \"ps-sync\"\n";
  const auto elastic = runCli("validate " + path);
  EXPECT_NE(elastic.exit_code, 0);
  EXPECT_NE(elastic.out.find("train.elastic: resumes on another number of ranks only"),
            std::string::npos)
      << elastic.out;
}

// `kill -9` of the launcher mid-run: the next open of the store marks the run `lost`, and
// the next launch removes the MPI segment folder the dead launcher could not.
TEST_F(Restarts, ARunWhoseLauncherWasKilledIsMarkedLostAndItsSegmentsRemoved) {
  const std::string launch = "sh -c '" + cliPath() + " run " + job("") +
                             " --quiet --set train.epochs=50 --set fault.straggler_rank=0"
                             " --set fault.straggler_delay_ms=2 --db " +
                             db() + " >/dev/null 2>&1 & echo $!'";
  FILE* pipe = popen(launch.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  int launcher = 0;
  ASSERT_EQ(std::fscanf(pipe, "%d", &launcher), 1);
  pclose(pipe);
  // Until its ranks have stored some steps.
  for (int i = 0; i < 100 && losses(1).size() < 40; ++i) usleep(100'000);
  ASSERT_GE(losses(1).size(), 40u);
  ASSERT_EQ(::kill(launcher, SIGKILL), 0);
  usleep(300'000);
  // Its private folders (launch/private_dir.h): the MPI segments' in /dev/shm, the job's in
  // the temp folder, both ranklab-<launcher pid>-XXXXXX.
  const std::string prefix = "ranklab-" + std::to_string(launcher) + "-";
  auto foldersLeft = [&] {
    int found = 0;
    for (const auto& base :
         {std::filesystem::path("/dev/shm"), std::filesystem::temp_directory_path()}) {
      for (const auto& entry : std::filesystem::directory_iterator(base))
        found += entry.path().filename().string().rfind(prefix, 0) == 0;
    }
    return found;
  };
  ASSERT_EQ(foldersLeft(), 2) << "SIGKILL skips the launcher's clean-up";

  ranklab::RunStore store(db());
  EXPECT_EQ(store.run(1)->status, "lost");
  // The dead launcher's mpirun loses its output pipe and ends; its ranks with it. (Only this
  // launcher's job file is looked for: CTest runs other tests' ranks beside this one.)
  const std::string its_job = prefix + "[A-Za-z0-9]{6}/job-[0-9]+\\.toml";
  bool ranks_gone = false;
  for (int i = 0; i < 100 && !ranks_gone; ++i, usleep(100'000))
    ranks_gone = ranklab::testing::processesMatching(its_job).empty();
  EXPECT_TRUE(ranks_gone) << "the killed launcher's ranks still run";
  for (pid_t pid : ranklab::testing::processesMatching(its_job)) ::kill(pid, SIGKILL);

  const auto next = runCli("validate " + quickstart());  // validating launches nothing
  ASSERT_EQ(next.exit_code, 0) << next.out;
  const auto quick = run(quickstart(), "--set train.epochs=1 --ranks 2");
  ASSERT_EQ(quick.exit_code, 0) << quick.out;
  EXPECT_EQ(foldersLeft(), 0) << "the next launcher removes a dead one's folders";
}

// `ranklab resume ID --ranks 2` continues a 4-rank run's checkpoint on 2 ranks as a new run:
// half of epoch 1 was seen (50 of 100 steps), so 100 of the 2-rank epoch's 200 steps remain;
// steps keep their numbers (51..150).
TEST_F(Restarts, AnElasticResumeGoesOnWithTheEpochOnFewerRanks) {
  const auto first = run(job(""), "--set train.max_steps=50 --set train.checkpoint_every=25");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const auto resumed = runCli("resume 1 --ranks 2 --set train.max_steps=0 --quiet --db " + db());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_TRUE(std::regex_search(resumed.out,
                                std::regex(R"(world 4 -> 2 ranks: epoch 1 goes on at step 100 )"
                                           R"(of its 200; the global batch is now 64 samples)")))
      << resumed.out;
  ranklab::RunStore store(db());
  const auto summary = store.summary(2);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->run.world, 2);
  std::map<int, std::pair<int64_t, int64_t>> span;  // rank -> first, last step
  for (const auto& s : store.steps(2)) {
    auto& [lo, hi] = span.try_emplace(s.rank, s.step, s.step).first->second;
    lo = std::min(lo, s.step);
    hi = std::max(hi, s.step);
  }
  ASSERT_EQ(span.size(), 2u);
  for (const auto& [rank, steps] : span) {
    EXPECT_EQ(steps.first, 51) << "rank " << rank;
    EXPECT_EQ(steps.second, 150) << "rank " << rank;
  }
  ASSERT_TRUE(summary->test_accuracy);
  EXPECT_GT(*summary->test_accuracy, 0.7);
}

// Issue 33, item 8: `resume 1` wrote its checkpoints over run 1's, so a second `resume 1`
// started where the first resume had got to. Now each resume writes its own, and `resume 1`
// always goes on from run 1's last checkpoint.
TEST_F(Restarts, EachResumeWritesItsOwnCheckpointsAndLeavesTheOriginals) {
  const auto first = run(job(""), "--set train.max_steps=30");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const std::string original = folder_.file("run.ckpt");
  auto bytesOf = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = bytesOf(original);
  ASSERT_FALSE(before.empty());
  const auto firstStepOf = [&](int64_t run_id) {
    int64_t lo = -1;
    for (const auto& s : ranklab::RunStore(db()).steps(run_id))
      lo = lo < 0 ? s.step : std::min(lo, s.step);
    return lo;
  };
  for (int64_t resumed_id : {2, 3}) {
    const auto resumed = runCli("resume 1 --set train.max_steps=60 --db " + db());
    ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
    EXPECT_NE(resumed.out.find("this run's checkpoints go to " + original + ".resume-of-1-"),
              std::string::npos)
        << resumed.out;
    EXPECT_EQ(firstStepOf(resumed_id), 31)
        << "run " << resumed_id << " goes on from run 1's step 30";
    EXPECT_EQ(bytesOf(original), before) << "run 1's checkpoint was overwritten";
  }
}

// ZeRO's shards follow the world: a ZeRO-2 run on 4 ranks resumed on 2 deals the optimizer
// state (and the gradients' shards) out afresh, each rank now holding a half, not a quarter.
TEST_F(Restarts, AnElasticResumeOfAZeroRunDealsItsShardsToTheNewWorld) {
  const auto first = run(job(""),
                         "--set parallel.zero=2 --set train.optimizer=\"adam\" "
                         "--set train.lr=0.001 --set train.max_steps=30");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const auto resumed = runCli("resume 1 --ranks 2 --set train.max_steps=0 --quiet --db " + db());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("world 4 -> 2 ranks"), std::string::npos) << resumed.out;
  ranklab::RunStore store(db());
  const auto before = store.summary(1), after = store.summary(2);
  ASSERT_TRUE(before && after);
  ASSERT_EQ(after->ranks.size(), 2u);
  const int64_t quarter = before->ranks.at(0).memory.optimizer;
  ASSERT_GT(quarter, 0);
  for (const auto& r : after->ranks) {
    EXPECT_NEAR(double(r.memory.optimizer), 2.0 * double(quarter), 0.01 * double(quarter))
        << "rank " << r.rank;
    EXPECT_EQ(r.memory.params, before->ranks.at(0).memory.params);  // ZeRO-2 keeps them whole
  }
  ASSERT_TRUE(after->test_accuracy);
  EXPECT_GT(*after->test_accuracy, 0.7);
}

// Under train.elastic a restart goes on without the dead rank: 4 ranks, rank 3 killed after
// step 40, the checkpoint at step 30 (30 % of the epoch) resumed on 3 ranks, whose epoch has
// 133 steps: from its step 40 on, to step 30 + 93 = 123.
TEST_F(Restarts, AnElasticRestartGoesOnWithoutTheDeadRank) {
  const auto r = run(job("[[faults]]\nrank = 3\nat_step = 40\naction = \"kill\"\n"),
                     "--max-restarts 1 --set train.elastic=true");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex(R"(on 3 ranks, without rank 3 \(train.elastic\))")))
      << r.out;
  ranklab::RunStore store(db());
  EXPECT_EQ(store.summary(1)->run.status, "done");
  std::map<int, int64_t> last;
  for (const auto& s : store.steps(1)) last[s.rank] = std::max(last[s.rank], s.step);
  EXPECT_EQ(last[0], 123);
  EXPECT_EQ(last[2], 123);
  EXPECT_EQ(last[3], 30) << "rank 3 left after the checkpoint";
  EXPECT_EQ(store.ranks(1).at(3).status, "left");
}

// A 3D run (data 2 x pipeline 2 x tensor 2 on 8 ranks) with rank 5 killed after step 40:
// the first replica's parts gathered into one whole-model checkpoint at step 30, every rank
// restarted from it, and the run trains as one that never failed, bit for bit. Then
// `resume 1 --ranks 4` goes on from the clean run's checkpoint with one replica of the same
// stages and slices (run 1's: run 2's job holds its kill, for ranks it would not have).
TEST_F(Restarts, AKilledRankOfA3DRunRestartsBitForBitAndResumesOnFewerReplicas) {
  const std::string three_d =
      "--set parallel.ranks=8 --set parallel.pipeline=2 --set parallel.tensor=2 "
      "--set parallel.microbatches=2 --set 'model.layers=[64, 32, 32, 16]' "
      "--set train.max_steps=60";
  const auto clean = run(job(""), three_d);
  ASSERT_EQ(clean.exit_code, 0) << clean.out;
  const auto restarted = run(job("[[faults]]\nrank = 5\nat_step = 40\naction = \"kill\"\n"),
                             three_d + " --max-restarts 1");
  ASSERT_EQ(restarted.exit_code, 0) << restarted.out;
  ranklab::RunStore store(db());
  ASSERT_EQ(store.summary(2)->run.status, "done");
  EXPECT_EQ(eventCounts(2)["restart"], 1);
  const auto expected = losses(1), got = losses(2);
  ASSERT_EQ(got.size(), 8u * 60u);
  for (const auto& [key, loss] : expected)
    ASSERT_EQ(got.at(key), loss) << "rank " << key.first << " step " << key.second;
  const auto resumed = runCli("resume 1 --ranks 4 --set train.max_steps=80 --quiet --db " + db());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("world 8 -> 4 ranks"), std::string::npos) << resumed.out;
  const auto after = store.summary(3);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->run.world, 4);
  std::map<int, int64_t> first;
  for (const auto& s : store.steps(3))
    first[s.rank] = first.count(s.rank) ? std::min(first[s.rank], s.step) : s.step;
  ASSERT_EQ(first.size(), 4u);
  for (const auto& [rank, step] : first) EXPECT_EQ(step, 61) << "rank " << rank;
  // It goes on from the trained model, not a fresh one: the loss near where run 1 left it
  // (tests/unit/checkpoint_split_test.cpp shows it follows 1 rank's resume within 1e-7).
  const auto resumed_losses = losses(3);
  const double start = expected.at({7, 1}), left = expected.at({7, 60}),
               next = resumed_losses.at({3, 61});
  std::printf(
      "last stage's loss: %.4f at step 1, %.4f at step 60 (8 ranks), %.4f at step 61 "
      "(4 ranks)\n",
      start, left, next);
  EXPECT_LT(next, left + 0.5 * (start - left));
  EXPECT_EQ(after->run.status, "done");
}

// Under train.elastic a 3D run goes on without the dead rank's whole replica: 8 ranks as
// 2 x 2 x 2, rank 5 killed, the run restarted on the other replica's 4.
TEST_F(Restarts, AnElastic3DRestartGoesOnWithoutTheDeadRanksReplica) {
  const auto r = run(job("[[faults]]\nrank = 5\nat_step = 40\naction = \"kill\"\n"),
                     "--max-restarts 1 --set train.elastic=true --set parallel.ranks=8 "
                     "--set parallel.pipeline=2 --set parallel.tensor=2 "
                     "--set 'model.layers=[64, 32, 32, 16]' --set train.max_steps=60");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("on 4 ranks, without the replica of rank 5 (ranks 4 to 7) (train.elastic)"),
            std::string::npos)
      << r.out;
  ranklab::RunStore store(db());
  EXPECT_EQ(store.summary(1)->run.status, "done");
  std::map<int, int64_t> last;
  for (const auto& s : store.steps(1)) last[s.rank] = std::max(last[s.rank], s.step);
  EXPECT_EQ(last[3], 60);
  EXPECT_EQ(last[5], 30) << "rank 5 left after the checkpoint";
}

// `runs attach ID` follows a run another process launched, from the store, to its end. The
// run is throttled (a 30 ms straggler, 100 steps: 3 s at least), so that it is still going
// when the attach starts however fast the CPU, and not minutes long on a loaded one.
TEST_F(Restarts, AttachFollowsARunLaunchedElsewhereToItsEnd) {
  const std::string launch = "sh -c '" + cliPath() + " run " + job("") +
                             " --quiet --set fault.straggler_rank=1"
                             " --set fault.straggler_delay_ms=30 --db " +
                             db() + " >/dev/null 2>&1 &'";
  ASSERT_EQ(std::system(launch.c_str()), 0);
  for (int i = 0; i < 100 && losses(1).empty(); ++i) usleep(100'000);
  ASSERT_FALSE(losses(1).empty()) << "the launched run stored no step";
  const auto attached = runCli("runs attach 1 --db " + db());
  EXPECT_EQ(attached.exit_code, 0) << attached.out;
  EXPECT_NE(attached.out.find("attached to run 1 (restart)"), std::string::npos) << attached.out;
  EXPECT_TRUE(std::regex_search(attached.out, std::regex(R"(step [0-9]+  rank 0 loss [0-9.]+)")))
      << attached.out;
  EXPECT_NE(attached.out.find("run 1  restart  [done]"), std::string::npos) << attached.out;
  // A finished run: its summary at once; an unknown one: a clear error.
  EXPECT_EQ(runCli("runs attach 1 --db " + db()).exit_code, 0);
  const auto unknown = runCli("runs attach 9 --db " + db());
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.out.find("no run with id 9"), std::string::npos) << unknown.out;
}

}  // namespace
