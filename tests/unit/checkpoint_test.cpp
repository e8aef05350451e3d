// Checkpoint files: round trip, atomic replacement, clear errors for truncated, foreign,
// newer and corrupted files; and a resumed run continuing the loss curve bit for bit.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>

#include "engine/data/idx_dataset.h"
#include "engine/train/checkpoint.h"
#include "engine/train/trainer.h"
#include "storage/bounded_read.h"
#include "tests/support/second_account.h"
#include "tests/support/temp_folder.h"
#include "tests/support/thread_ranks.h"

namespace ranklab {
namespace {

namespace fs = std::filesystem;

class CheckpointFile : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return folder_.file(name); }

  testing::TempFolder folder_;
};

Checkpoint sample() {
  Checkpoint c;
  c.model = "Linear(3, 2)";
  c.params = {1.f, -2.f, 3.5f, 0.f, 1e-30f, 7.f, 8.f, 9.f};
  c.optimizer = "adam";
  c.optimizer_state.steps = 12;
  c.optimizer_state.tensors = {{"exp_avg", {0.1f, 0.2f}}, {"exp_avg_sq", {0.3f, 0.4f}}};
  c.step = 345;
  c.epoch = 3;
  c.step_in_epoch = 45;
  c.training_passes = 345;
  c.seed = 9;
  c.world = 4;
  c.replicas = 2;
  c.batch_size = 64;
  c.has_loss_scale = true;
  c.loss_scale = 32768.f;
  c.loss_scale_clean_steps = 17;
  c.loss_scale_skipped_steps = 2;
  return c;
}

// A writer killed (SIGKILL) at a random moment while it writes checkpoint after checkpoint,
// 100 times: the file then read is always one whole checkpoint (its CRC checks, its
// parameters all equal its step, as written), never a torn one; the writer's abandoned
// temporary files are removed by the next writer.
TEST_F(CheckpointFile, AWriterKilledMidWriteLeavesOnlyWholeCheckpoints) {
  const std::string file = path("run.ckpt");
  std::mt19937 random(7);
  int64_t last_step = 0;
  int whole = 0;
  for (int kill = 0; kill < 100; ++kill) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      Checkpoint c = sample();
      for (int64_t step = last_step + 1;; ++step) {
        c.step = step;
        c.params.assign(1 << 19, static_cast<float>(step));
        writeCheckpoint(file, c);
      }
    }
    usleep(std::uniform_int_distribution<int>(1'000, 20'000)(random));
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    if (!fs::exists(file)) continue;            // killed before its first rename: no checkpoint yet
    const Checkpoint c = readCheckpoint(file);  // throws on a torn or corrupt file
    ASSERT_EQ(c.params.size(), size_t{1} << 19);
    ASSERT_EQ(c.params.front(), static_cast<float>(c.step));
    ASSERT_EQ(c.params.back(), static_cast<float>(c.step));
    ASSERT_GE(c.step, last_step);
    last_step = c.step;
    ++whole;
  }
  int temporaries = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(file).parent_path()))
    temporaries += entry.path().filename().string().rfind("run.ckpt.tmp-", 0) == 0;
  EXPECT_LE(temporaries, 1) << "only the last killed writer's, not yet removed";
  removeAbandonedTemporaries(file);
  temporaries = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(file).parent_path()))
    temporaries += entry.path().filename().string().rfind("run.ckpt.tmp-", 0) == 0;
  EXPECT_EQ(temporaries, 0);
  std::printf("100 kills mid-write: %d times a whole checkpoint read back (last step %lld)\n",
              whole, static_cast<long long>(last_step));
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// The error's message for reading `path`, or "" when it reads fine.
std::string readError(const std::string& path) {
  try {
    readCheckpoint(path);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

TEST_F(CheckpointFile, RoundTripsEveryField) {
  writeCheckpoint(path("a.ckpt"), sample());
  const Checkpoint c = readCheckpoint(path("a.ckpt"));
  const Checkpoint s = sample();
  EXPECT_EQ(c.model, s.model);
  EXPECT_EQ(c.params, s.params);
  EXPECT_EQ(c.optimizer, s.optimizer);
  EXPECT_EQ(c.optimizer_state.steps, s.optimizer_state.steps);
  EXPECT_EQ(c.optimizer_state.tensors, s.optimizer_state.tensors);
  EXPECT_EQ(c.step, s.step);
  EXPECT_EQ(c.epoch, s.epoch);
  EXPECT_EQ(c.step_in_epoch, s.step_in_epoch);
  EXPECT_EQ(c.training_passes, s.training_passes);
  EXPECT_EQ(c.seed, s.seed);
  EXPECT_EQ(c.world, s.world);
  EXPECT_EQ(c.replicas, s.replicas);
  EXPECT_EQ(c.batch_size, s.batch_size);
  EXPECT_TRUE(c.has_loss_scale);
  EXPECT_EQ(c.loss_scale, s.loss_scale);
  EXPECT_EQ(c.loss_scale_clean_steps, s.loss_scale_clean_steps);
  EXPECT_EQ(c.loss_scale_skipped_steps, s.loss_scale_skipped_steps);
  Checkpoint fp32 = s;
  fp32.has_loss_scale = false;
  writeCheckpoint(path("b.ckpt"), fp32);
  EXPECT_FALSE(readCheckpoint(path("b.ckpt")).has_loss_scale);
}

TEST_F(CheckpointFile, ReplacesTheOldFileAndLeavesNoTemporary) {
  writeCheckpoint(path("a.ckpt"), sample());
  Checkpoint next = sample();
  next.step = 400;
  writeCheckpoint(path("a.ckpt"), next);
  EXPECT_EQ(readCheckpoint(path("a.ckpt")).step, 400);
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(folder_.path())) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "a.ckpt");
  }
  EXPECT_EQ(files, 1u);
}

TEST_F(CheckpointFile, AnUnwritableFolderIsAnErrorNamingThePath) {
  const std::string target = path("missing-folder/a.ckpt");
  try {
    writeCheckpoint(target, sample());
    FAIL() << "expected an error";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("missing-folder/a.ckpt.tmp-"), std::string::npos)
        << e.what();
  }
}

TEST_F(CheckpointFile, TruncatedAtAnyLengthIsAClearError) {
  writeCheckpoint(path("a.ckpt"), sample());
  const std::string bytes = readBytes(path("a.ckpt"));
  for (size_t length : {size_t{0}, size_t{5}, size_t{8}, size_t{20}, size_t{28}, bytes.size() / 2,
                        bytes.size() - 1}) {
    writeBytes(path("cut.ckpt"), bytes.substr(0, length));
    const std::string message = readError(path("cut.ckpt"));
    EXPECT_NE(message.find(path("cut.ckpt") + ": "), std::string::npos) << length;
    const bool says_why = message.find("truncated") != std::string::npos ||
                          message.find("not a ranklab checkpoint") != std::string::npos;
    EXPECT_TRUE(says_why) << length << ": " << message;
  }
}

TEST_F(CheckpointFile, ForeignNewerCorruptedAndMissingFilesAreRefusedClearly) {
  writeBytes(path("job.toml"), "name = \"not a checkpoint\"\n");
  EXPECT_NE(readError(path("job.toml")).find("not a ranklab checkpoint"), std::string::npos);

  writeCheckpoint(path("a.ckpt"), sample());
  std::string bytes = readBytes(path("a.ckpt"));
  std::string newer = bytes;
  newer[8] = 3;
  writeBytes(path("newer.ckpt"), newer);
  EXPECT_NE(
      readError(path("newer.ckpt")).find("format version 3; this build reads versions 1 to 2"),
      std::string::npos)
      << readError(path("newer.ckpt"));

  std::string flipped = bytes;
  flipped[bytes.size() - 3] ^= 0x40;
  writeBytes(path("flipped.ckpt"), flipped);
  EXPECT_NE(readError(path("flipped.ckpt")).find("CRC-32"), std::string::npos);

  const std::string missing = readError(path("none.ckpt"));
  EXPECT_NE(missing.find("none.ckpt: cannot open: no such file or directory"), std::string::npos)
      << missing;
}

// Issue 33, item 7: a checkpoint whose CRC checks but whose fields make no sense (a negative
// step, more steps of the epoch than of the run, NaN parameters, a folder for a path) is
// refused, naming the file and the field.
TEST_F(CheckpointFile, ACrcValidCheckpointWithNonsenseFieldsIsRefusedNamingTheField) {
  auto refusalOf = [&](const std::function<void(Checkpoint&)>& spoil) {
    Checkpoint c = sample();
    spoil(c);
    writeCheckpoint(path("bad.ckpt"), c);  // the writer checks nothing: the CRC will pass
    return readError(path("bad.ckpt"));
  };
  const std::string file = path("bad.ckpt") + ": ";
  EXPECT_EQ(refusalOf([](Checkpoint& c) { c.step = -5; }),
            file + "field \"step\" is -5; a run writes 0 or more");
  EXPECT_EQ(refusalOf([](Checkpoint& c) { c.step_in_epoch = -1; }),
            file + "field \"step_in_epoch\" is -1; a run writes 0 or more");
  EXPECT_NE(refusalOf([](Checkpoint& c) {
              c.params[2] = std::nanf("");
            }).find("field \"params\" holds a non-finite value at 2"),
            std::string::npos);
  EXPECT_NE(refusalOf([](Checkpoint& c) {
              c.optimizer_state.tensors[1].second[0] = INFINITY;
            }).find("field \"optimizer.state.exp_avg_sq\" holds a non-finite value at 0"),
            std::string::npos);
  EXPECT_NE(refusalOf([](Checkpoint& c) { c.loss_scale = -1.f; }).find("\"amp.loss_scale\""),
            std::string::npos);
  EXPECT_EQ(refusalOf([](Checkpoint& c) { c.world = 0; }),
            file + "field \"world\" is 0; a run writes 1 or more");
  EXPECT_EQ(refusalOf([](Checkpoint& c) { c.replicas = 3; }),
            file +
                "field \"replicas\" is 3; a run's data-parallel replicas divide its world of "
                "4 ranks");
  fs::create_directories(path("folder.ckpt"));
  EXPECT_EQ(readError(path("folder.ckpt")),
            path("folder.ckpt") + ": is a folder, not a checkpoint file");
}

// The refusal of reading `file`, and that it came within a second.
std::string timedReadError(const std::string& file) {
  const auto start = std::chrono::steady_clock::now();
  const std::string error = readError(file);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << file;
  return error;
}

// Issue 57, item 6: train.resume_from=/dev/zero ended each rank in std::bad_alloc, naming no
// file; a FIFO blocked. The header is checked against the file's size before the payload.
TEST_F(CheckpointFile, DevicesFifosAndHugeFilesAreRefusedWithinASecondNamingTheFile) {
  const std::string fifo = path("pipe.ckpt");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(timedReadError("/dev/zero"), "/dev/zero: is a character device, not a regular file");
  EXPECT_EQ(timedReadError(fifo), fifo + ": is a FIFO (a named pipe), not a regular file");
  EXPECT_EQ(timedReadError("/proc/self/mem"), "/proc/self/mem: cannot read: input/output error");

  writeCheckpoint(path("a.ckpt"), sample());
  const std::string huge = path("huge.ckpt");
  writeBytes(huge, readBytes(path("a.ckpt")).substr(0, 28));  // a header promising a little
  const uint64_t memory = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
  fs::resize_file(huge, memory / 2);  // sparse: nothing is written
  EXPECT_NE(timedReadError(huge).find(": truncated or padded: the header promises"),
            std::string::npos)
      << readError(huge);
  fs::resize_file(huge, memory + (uint64_t{1} << 30));
  const std::string over = timedReadError(huge);
  EXPECT_NE(over.find(huge + ": is "), std::string::npos) << over;
  EXPECT_NE(over.find("; checkpoints (read whole into this machine's memory) are limited to " +
                      byteSize(memory)),
            std::string::npos)
      << over;
}

TEST_F(CheckpointFile, AFileThisAccountMayNotReadSaysPermissionDenied) {
  if (!testing::canBecomeNobody()) GTEST_SKIP() << "needs root to become nobody (uid 65534)";
  fs::permissions(folder_.path(), fs::perms(0755));
  writeCheckpoint(path("a.ckpt"), sample());
  ASSERT_EQ(chmod(path("a.ckpt").c_str(), 0), 0);
  EXPECT_TRUE(testing::asNobody([&] {
    return readError(path("a.ckpt")) == path("a.ckpt") + ": cannot open: permission denied";
  }));
}

// ---- resuming a run ----

// Dropout, Adam, warm-up and a cosine schedule: every piece of state must come back.
JobSpec resumableJob(int64_t max_steps) {
  JobSpec job;
  job.model.layers = {32};
  job.model.dropout = 0.2;
  job.train.optimizer = OptimizerKind::kAdam;
  job.train.lr = 0.002;
  job.train.lr_schedule = LrScheduleKind::kCosine;
  job.train.warmup_steps = 10;
  job.train.epochs = 3;
  job.train.batch_size = 25;
  job.train.max_steps = max_steps;
  job.parallel.ranks = 2;
  return job;
}

// Rank 0's loss at each step.
std::map<int64_t, double> trainRank0(const JobSpec& job) {
  const auto ranks = testing::trainWithThreads(job);
  std::map<int64_t, double> losses;
  for (size_t i = 0; i < ranks[0].steps.size(); ++i) losses[ranks[0].steps[i]] = ranks[0].losses[i];
  return losses;
}

TEST_F(CheckpointFile, ResumedRunContinuesTheLossCurveBitForBit) {
  const int64_t k = 30;  // 80 steps per epoch: the continuation crosses into epoch 2
  const auto uninterrupted = trainRank0(resumableJob(k + 100));

  JobSpec first = resumableJob(k);
  first.train.checkpoint_path = path("run.ckpt");
  trainRank0(first);
  EXPECT_EQ(readCheckpoint(path("run.ckpt")).step, k);

  JobSpec rest = resumableJob(k + 100);
  rest.train.resume_from = path("run.ckpt");
  const auto resumed = trainRank0(rest);
  ASSERT_EQ(resumed.size(), 100u);
  EXPECT_EQ(resumed.begin()->first, k + 1);
  for (const auto& [step, loss] : resumed) {
    ASSERT_EQ(loss, uninterrupted.at(step)) << "step " << step;
  }
  std::printf("loss at step %lld: %.9g uninterrupted, %.9g resumed from step %lld\n",
              static_cast<long long>(k + 100), uninterrupted.at(k + 100), resumed.at(k + 100),
              static_cast<long long>(k));
}

// Trains make(k) writing a checkpoint to `file`, then make(k + more) resumed from it:
// rank 0's losses after step k must be an uninterrupted make(k + more)'s, bit for bit.
void expectResumeContinues(const std::function<JobSpec(int64_t)>& make, int64_t k, int64_t more,
                           const std::string& file) {
  const auto uninterrupted = trainRank0(make(k + more));
  JobSpec first = make(k);
  first.train.checkpoint_path = file;
  trainRank0(first);
  JobSpec rest = make(k + more);
  rest.train.resume_from = file;
  const auto resumed = trainRank0(rest);
  ASSERT_EQ(resumed.size(), static_cast<size_t>(more));
  for (const auto& [step, loss] : resumed) {
    ASSERT_EQ(loss, uninterrupted.at(step)) << "step " << step;
  }
}

// With AMP the loss scale is part of the state: fp16 with a small growth interval, so the
// scale moves (and overflow skips happen) on both sides of the checkpoint.
TEST_F(CheckpointFile, ResumedAmpRunContinuesTheLossCurveBitForBit) {
  auto ampJob = [](int64_t max_steps) {
    JobSpec job = resumableJob(max_steps);
    job.amp.dtype = AmpDtype::kFp16;
    job.amp.growth_interval = 7;
    return job;
  };
  const int64_t k = 25;
  expectResumeContinues(ampJob, k, 40, path("amp.ckpt"));
  const Checkpoint saved = readCheckpoint(path("amp.ckpt"));
  EXPECT_TRUE(saved.has_loss_scale);
  std::printf("fp16: loss scale %g at step %lld\n", saved.loss_scale, static_cast<long long>(k));
}

// shm-sharded: each rank's optimizer holds current state only for its own chunk, so rank 0
// gathers the chunks into the checkpoint; with Adam a stale chunk would show at once. Three
// ranks, so two chunks come from other ranks; the file equals a plain shm run's.
TEST_F(CheckpointFile, ShardedUpdateResumesBitForBitFromGatheredOptimizerState) {
  auto shardedJob = [](int64_t max_steps, const std::string& algorithm = "shm-sharded") {
    JobSpec job = resumableJob(max_steps);
    job.parallel.ranks = 3;
    job.parallel.algorithm = algorithm;
    return job;
  };
  const int64_t k = 30;
  expectResumeContinues([&](int64_t steps) { return shardedJob(steps); }, k, 40,
                        path("sharded.ckpt"));
  JobSpec plain = shardedJob(k, "shm");
  plain.train.checkpoint_path = path("shm.ckpt");
  trainRank0(plain);
  const Checkpoint sharded = readCheckpoint(path("sharded.ckpt"));
  const Checkpoint shm = readCheckpoint(path("shm.ckpt"));
  EXPECT_EQ(sharded.step, k);
  EXPECT_EQ(sharded.params, shm.params);
  EXPECT_EQ(sharded.optimizer_state.tensors, shm.optimizer_state.tensors);
}

// ZeRO: each rank holds Adam's state (and under stage 3 the parameters) for its ring chunk
// alone; the chunks are gathered, so the file is a plain ring run's, bit for bit, and the
// run resumes exactly from it.
TEST_F(CheckpointFile, ZeroShardsGatherIntoThePlainRunsCheckpointAndResumeBitForBit) {
  auto zeroJob = [](int64_t max_steps, int zero) {
    JobSpec job = resumableJob(max_steps);
    job.parallel.ranks = 3;
    job.parallel.zero = zero;
    return job;
  };
  const int64_t k = 30;
  JobSpec plain = zeroJob(k, 0);
  plain.train.checkpoint_path = path("plain.ckpt");
  trainRank0(plain);
  const Checkpoint whole = readCheckpoint(path("plain.ckpt"));
  for (int zero : {1, 2, 3}) {
    const std::string file = path("zero" + std::to_string(zero) + ".ckpt");
    expectResumeContinues([&](int64_t steps) { return zeroJob(steps, zero); }, k, 40, file);
    const Checkpoint sharded = readCheckpoint(file);
    EXPECT_EQ(sharded.step, k);
    EXPECT_EQ(sharded.params, whole.params) << "zero " << zero;
    EXPECT_EQ(sharded.optimizer_state.steps, whole.optimizer_state.steps);
    EXPECT_EQ(sharded.optimizer_state.tensors, whole.optimizer_state.tensors) << "zero " << zero;
  }
}

TEST_F(CheckpointFile, ResumingAnotherRunsCheckpointSaysWhatDiffers) {
  JobSpec first = resumableJob(5);
  first.train.checkpoint_path = path("run.ckpt");
  trainRank0(first);
  JobSpec other = resumableJob(10);
  other.train.resume_from = path("run.ckpt");
  other.model.layers = {16};
  try {
    trainRank0(other);
    FAIL() << "expected an error";
  } catch (const CheckpointError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("run.ckpt: the checkpoint's model is Linear(784, 32) -> "),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("this job's is Linear(784, 16) -> "), std::string::npos) << message;
  }
}

// More steps of the epoch than this job's epoch has trained nothing and ended "done".
TEST_F(CheckpointFile, AStepInEpochBeyondTheJobsEpochIsRefusedNamingTheField) {
  JobSpec first = resumableJob(5);
  first.train.checkpoint_path = path("run.ckpt");
  trainRank0(first);
  Checkpoint c = readCheckpoint(path("run.ckpt"));
  c.step_in_epoch = 1'000'000'000'000;
  writeCheckpoint(path("run.ckpt"), c);  // CRC-valid nonsense
  JobSpec next = resumableJob(10);
  next.train.resume_from = path("run.ckpt");
  try {
    trainRank0(next);
    FAIL() << "expected an error";
  } catch (const CheckpointError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("run.ckpt: field \"step_in_epoch\" is 1000000000000 steps into epoch 1"),
              std::string::npos)
        << message;
  }
}

// Checkpoints in a folder another account can write, as /tmp is (issue 57, item 1): links
// that account plants are never written through, the checkpoint never becomes a link, and
// what holds the weights is this account's alone.
class CheckpointBesideAnotherAccount : public CheckpointFile {
 protected:
  void SetUp() override {
    if (!testing::canBecomeNobody()) GTEST_SKIP() << "needs root to act as nobody (uid 65534)";
    shared_ = testing::sharedFolderIn(folder_.path());
    victim_ = testing::victimFile(folder_.path());
  }
  void expectVictimUntouched() const {
    EXPECT_EQ(testing::contentsOf(victim_), "root's own\n");
    EXPECT_EQ(testing::modeOf(victim_), 0600u);
  }
  fs::path shared_, victim_;
};

TEST_F(CheckpointBesideAnotherAccount, ALinkPlantedAtTheTemporaryNameIsNeverWrittenThrough) {
  const fs::path target = shared_ / "run.ckpt";
  const fs::path temporary = target.string() + ".tmp-" + std::to_string(getpid());
  ASSERT_TRUE(testing::plantLinkAsNobody(victim_, temporary));
  try {
    writeCheckpoint(target.string(), sample());
    FAIL() << "wrote through a planted link";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find(temporary.string() +
                                         ": cannot write: it is a symbolic link; ranklab will "
                                         "not write through it"),
              std::string::npos)
        << e.what();
  }
  expectVictimUntouched();
  EXPECT_FALSE(fs::exists(fs::symlink_status(target)));
}

TEST_F(CheckpointBesideAnotherAccount, TheCheckpointIs0600AndALinkAtItsNameIsReplacedNotFollowed) {
  const fs::path target = shared_ / "run.ckpt";
  ASSERT_TRUE(testing::plantLinkAsNobody(victim_, target));
  writeCheckpoint(target.string(), sample());
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(target))) << "never left a link";
  EXPECT_EQ(testing::modeOf(target), 0600u);
  EXPECT_EQ(readCheckpoint(target.string()).step, sample().step);
  expectVictimUntouched();
}

TEST_F(CheckpointBesideAnotherAccount, AbandonedTemporariesOfAnotherAccountAreLeftAlone) {
  const fs::path target = shared_ / "run.ckpt";
  const pid_t gone = [] {
    const pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, nullptr, 0);
    return child;
  }();
  const fs::path link = target.string() + ".tmp-" + std::to_string(gone);
  const fs::path theirs = target.string() + ".tmp-" + std::to_string(gone + 100000);
  ASSERT_TRUE(testing::plantLinkAsNobody(victim_, link));
  ASSERT_TRUE(testing::asNobody([&] { return std::ofstream(theirs).good(); }));
  removeAbandonedTemporaries(target.string());
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::exists(theirs));
  expectVictimUntouched();
}

TEST_F(CheckpointBesideAnotherAccount, AFolderAnotherAccountOwnsOrCanReplaceFilesInIsRefused) {
  const fs::path theirs = shared_ / "theirs";
  ASSERT_TRUE(testing::asNobody([&] { return mkdir(theirs.c_str(), 0777) == 0; }));
  chmod(theirs.c_str(), 0777);
  for (const char* why : {"owned by uid 65534 (nobody), not by this account (root)",
                          "writable by others without the sticky bit (mode 0777)"}) {
    try {
      writeCheckpoint((theirs / "run.ckpt").string(), sample());
      FAIL() << "wrote a checkpoint into " << theirs;
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find(theirs.string() + ": " + why), std::string::npos)
          << e.what();
    }
    ASSERT_EQ(chown(theirs.c_str(), 0, 0), 0);  // then root's, but open to all
  }
  EXPECT_TRUE(fs::is_empty(theirs));
}

}  // namespace
}  // namespace ranklab
