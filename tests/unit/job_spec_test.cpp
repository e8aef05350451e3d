// The job file: defaults, the quickstart preset, every kind of problem (with its place in
// the file and the allowed values), --set overrides, and the toTomlText round trip.
#include "engine/job/job_spec.h"
#include "engine/job/device_spec.h"
#include "engine/job/job_file.h"

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/second_account.h"
#include "tests/support/temp_folder.h"

namespace ranklab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The problems with `text`, expecting parseJob to agree that there are some.
std::vector<JobIssue> issuesOf(const std::string& text, const JobOverrides& overrides = {}) {
  auto issues = checkJob(text, "job.toml", overrides);
  EXPECT_THROW(parseJob(text, "job.toml", overrides), JobError);
  return issues;
}

JobIssue onlyIssueOf(const std::string& text, const JobOverrides& overrides = {}) {
  auto issues = issuesOf(text, overrides);
  if (issues.size() != 1) {
    ADD_FAILURE() << "expected exactly one issue, got " << issues.size();
    for (const auto& issue : issues) ADD_FAILURE() << "  issue: " << issue.str();
  }
  return issues.empty() ? JobIssue{} : issues.front();
}

// train.device is parsed in one place: what each spelling means, and what is none of them.
TEST(DeviceSpec, EverySpellingTheSchemaAdmitsAndNothingElse) {
  const auto cpu = parseDeviceSpec("cpu");
  ASSERT_TRUE(cpu);
  EXPECT_FALSE(cpu->onGpu());
  const auto cuda = parseDeviceSpec("cuda");
  ASSERT_TRUE(cuda);
  EXPECT_TRUE(cuda->onGpu());
  EXPECT_EQ(cuda->gpuFor(5, 4), 1);  // the ranks of a host take its GPUs in turn
  const auto third = parseDeviceSpec("cuda:3");
  ASSERT_TRUE(third);
  EXPECT_EQ(third->index, 3);
  EXPECT_EQ(third->gpuFor(5, 4), 3);
  EXPECT_EQ(parseDeviceSpec("cuda:99")->index, 99);
  for (const char* bad : {"", "gpu", "cuda:", "cuda:100", "cuda:x", "cuda:-1", "CPU", "cuda0"})
    EXPECT_FALSE(parseDeviceSpec(bad)) << bad;
}

constexpr char kTextJob[] = "[model]\nkind = \"gpt\"\n[data]\ndataset = \"text\"\n";

// data.path left out is the dataset's own: the resolved job a run stores names the file read.
TEST(JobSpec, ATextJobWithoutAPathReadsAndStoresTheDefaultCorpus) {
  const JobSpec text = parseJob(kTextJob, "text.toml");
  EXPECT_EQ(text.data.path, kDefaultTextCorpus);
  EXPECT_NE(toTomlText(text).find(kDefaultTextCorpus), std::string::npos);
  EXPECT_EQ(parseJob(toTomlText(text), "resolved.toml"), text);
  EXPECT_EQ(parseJob("[model]\nkind = \"gpt\"\n", "gpt.toml", {"data.dataset=text"}).data.path,
            kDefaultTextCorpus);
  EXPECT_EQ(parseJob("", "empty.toml").data.path, kFashionMnistFolder);
  // A path set is the path read, even Fashion-MNIST's folder for a text run.
  const JobSpec folder =
      parseJob(kTextJob + std::string("path = \"/usr/share/datasets/fashion-mnist\"\n"), "t.toml");
  EXPECT_EQ(folder.data.path, kFashionMnistFolder);
}

TEST(JobSpec, EmptyFileGivesDefaults) {
  JobSpec job = parseJob("", "empty.toml");
  EXPECT_EQ(job, JobSpec{});
  EXPECT_EQ(job.name, "job");
  EXPECT_EQ(job.data.dataset, DatasetKind::kFashionMnist);
  EXPECT_EQ(job.model.layers, (std::vector<int>{256, 128}));
  EXPECT_EQ(job.train.batch_size, 64);
  EXPECT_DOUBLE_EQ(job.train.lr, 0.05);
  EXPECT_EQ(job.parallel.ranks, 2);
  EXPECT_EQ(job.parallel.algorithm, "ring");
  EXPECT_EQ(job.fault.straggler_rank, -1);
  EXPECT_EQ(job.telemetry.heartbeat_ms, 1000);
  EXPECT_EQ(job.telemetry.silence_limit_s, 120);
  EXPECT_TRUE(checkJob("# only a comment\n", "empty.toml").empty());
}

TEST(JobSpec, QuickstartPresetParses) {
  JobSpec job = loadJob(RANKLAB_QUICKSTART_JOB);
  JobSpec expected;
  expected.name = "quickstart";
  expected.data.dataset = DatasetKind::kFashionMnist;
  expected.model.kind = ModelKind::kMlp;
  expected.model.layers = {256, 128};
  expected.train.epochs = 2;
  expected.train.batch_size = 64;
  expected.train.lr = 0.05;
  expected.train.momentum = 0.9;
  expected.train.seed = 1;
  expected.parallel.ranks = 4;
  expected.parallel.strategy = "allreduce";
  expected.parallel.algorithm = "ring";
  expected.compression.codec = "none";
  expected.amp.dtype = AmpDtype::kFp32;
  EXPECT_EQ(job, expected);
  EXPECT_EQ(job.train.lr, 0.05);  // exactly, not nearly
  EXPECT_EQ(job.parallel.ranks, 4);
}

TEST(JobSpec, UnknownKeyNamesLineKeyAllowedKeysAndSuggestion) {
  JobIssue issue = onlyIssueOf("name = \"x\"\n[train]\nepochs = 3\nbatch_sise = 32\n");
  EXPECT_EQ(issue.file, "job.toml");
  EXPECT_EQ(issue.line, 4);
  EXPECT_EQ(issue.column, 1);
  EXPECT_EQ(issue.key, "train.batch_sise");
  EXPECT_THAT(issue.message, HasSubstr("unknown key \"batch_sise\" in [train]"));
  EXPECT_THAT(issue.message, HasSubstr("; did you mean batch_size? allowed keys:"));
  EXPECT_THAT(
      issue.message,
      HasSubstr(
          "allowed keys: epochs, batch_size, accumulate_steps, optimizer, lr, momentum, nesterov, "
          "weight_decay, beta1, beta2, eps, lr_schedule, lr_step_epochs, lr_gamma, "
          "lr_min, warmup_steps, grad_clip, seed, max_steps, eval_every, eval_batches, "
          "sample_chars, "
          "checkpoint_path, "
          "checkpoint_every, resume_from"));
  EXPECT_THAT(issue.str(), HasSubstr("job.toml:4:1: train.batch_sise: unknown key"));

  JobIssue far = onlyIssueOf("[train]\nwarmup = 3\n");
  EXPECT_THAT(far.message, Not(HasSubstr("did you mean")));
  EXPECT_THAT(far.message, HasSubstr("allowed keys: epochs"));
}

TEST(JobSpec, UnknownTopLevelKey) {
  JobIssue issue = onlyIssueOf("nmae = \"x\"\n");
  EXPECT_EQ(issue.line, 1);
  EXPECT_EQ(issue.key, "nmae");
  EXPECT_THAT(issue.message, HasSubstr("did you mean name?"));
  EXPECT_THAT(issue.message, HasSubstr("sections data, model, train"));
}

TEST(JobSpec, UnknownSectionListsAllowedSections) {
  JobIssue issue = onlyIssueOf("[train]\nepochs = 1\n\n[trian]\nepochs = 1\n");
  EXPECT_EQ(issue.line, 4);
  EXPECT_EQ(issue.key, "trian");
  EXPECT_THAT(issue.message, HasSubstr("unknown section [trian]"));
  EXPECT_THAT(issue.message, HasSubstr("did you mean [train]?"));
  EXPECT_THAT(issue.message, HasSubstr("allowed sections: data, model, train, parallel, "
                                       "compression, amp, fault, telemetry"));
}

TEST(JobSpec, WrongTypeSaysExpectedAndGot) {
  JobIssue issue = onlyIssueOf("[train]\nbatch_size = \"64\"\n");
  EXPECT_EQ(issue.line, 2);
  EXPECT_EQ(issue.column, 14);
  EXPECT_EQ(issue.key, "train.batch_size");
  EXPECT_EQ(issue.message, "expected an integer, got string");

  EXPECT_EQ(onlyIssueOf("[train]\nlr = \"fast\"\n").message, "expected a number, got string");
  EXPECT_EQ(onlyIssueOf("[parallel]\nalgorithm = 3\n").message, "expected a string, got integer");
  EXPECT_EQ(onlyIssueOf("[model]\nlayers = 64\n").message,
            "expected an array of integers, got integer");
  JobIssue section = onlyIssueOf("train = 5\n");
  EXPECT_EQ(section.key, "train");
  EXPECT_THAT(section.message, HasSubstr("expected a table"));
}

TEST(JobSpec, FloatKeysAcceptIntegers) {
  JobSpec job = parseJob("[train]\nlr = 1\nmomentum = 0\n", "job.toml");
  EXPECT_EQ(job.train.lr, 1.0);
  EXPECT_EQ(job.train.momentum, 0.0);
}

TEST(JobSpec, OutOfRangeSaysAllowedRange) {
  JobIssue issue = onlyIssueOf("[train]\nbatch_size = 0\n");
  EXPECT_EQ(issue.line, 2);
  EXPECT_EQ(issue.key, "train.batch_size");
  EXPECT_EQ(issue.message, "must be 1..65536, got 0");

  EXPECT_EQ(onlyIssueOf("[train]\nlr = 0.0\n").message, "must be > 0 and <= 10, got 0");
  EXPECT_EQ(onlyIssueOf("[train]\nmomentum = 1\n").message, "must be >= 0 and < 1, got 1");
  EXPECT_EQ(onlyIssueOf("[train]\nlr = nan\n").message, "must be > 0 and <= 10, got nan");
  EXPECT_EQ(onlyIssueOf("[train]\nseed = -1\n").message, "must be >= 0, got -1");
  EXPECT_EQ(onlyIssueOf("[parallel]\nranks = 65537\n").message, "must be 1..65536, got 65537");
  EXPECT_EQ(onlyIssueOf("[telemetry]\nheartbeat_ms = 10\n").message, "must be 50..60000, got 10");
  EXPECT_EQ(onlyIssueOf("[telemetry]\nsilence_limit_s = 0\n").message, "must be 1..86400, got 0");
  EXPECT_EQ(onlyIssueOf("[data]\npath = \"\"\n").message, "must not be empty");
}

// A cluster's job is a valid file: thousands of ranks, for `simulate` and `plan` (a launch
// weighs its ranks against what the machine has: app/cli/rank_capacity.h). It once stopped
// at 256; past 65,536 the key is named.
TEST(JobSpec, AClustersThousandsOfRanksAreValidUpTo65536) {
  const JobSpec job = parseJob(
      "[parallel]\nranks = 4096\nalgorithm = \"hierarchical\"\nranks_per_host = 512\n"
      "[fault]\nstraggler_rank = 4095\nstraggler_delay_ms = 5\n"
      "[[faults]]\nrank = 4000\nat_step = 5\naction = \"kill\"\n",
      "cluster.toml");
  EXPECT_EQ(job.parallel.ranks, 4096);
  EXPECT_EQ(job.parallel.ranks_per_host, 512);
  EXPECT_EQ(job.fault.straggler_rank, 4095);
  EXPECT_EQ(job.faults.at(0).rank, 4000);
  EXPECT_EQ(parseJob("[parallel]\nranks = 65536\n", "job.toml").parallel.ranks, 65536);
  EXPECT_EQ(parseJob("", "job.toml", {"parallel.ranks=4096"}).parallel.ranks, 4096);

  const JobIssue over = onlyIssueOf("[parallel]\nranks = 65537\n");
  EXPECT_EQ(over.key, "parallel.ranks");
  EXPECT_EQ(over.line, 2);
  EXPECT_EQ(over.message, "must be 1..65536, got 65537");
  EXPECT_EQ(onlyIssueOf("", {"parallel.ranks=65537"}).key, "parallel.ranks");
}

TEST(JobSpec, LayersAreCheckedEntryByEntry) {
  EXPECT_EQ(onlyIssueOf("[model]\nlayers = [1, 2, 3, 4, 5, 6, 7, 8, 9]\n").message,
            "must have 0..8 entries (one width per hidden layer), got 9");
  JobIssue issue = onlyIssueOf("[model]\nlayers = [64, 0]\n");
  EXPECT_EQ(issue.key, "model.layers");
  EXPECT_EQ(issue.line, 2);
  EXPECT_EQ(issue.column, 15);  // points at the 0
  EXPECT_EQ(issue.message, "entry 2 must be 1..65536, got 0");
  EXPECT_EQ(onlyIssueOf("[model]\nlayers = [64, \"a\"]\n").message,
            "entry 2: expected an integer, got string");
}

TEST(JobSpec, BadEnumListsAllowedValues) {
  JobIssue issue = onlyIssueOf("[parallel]\nalgorithm = \"tree\"\n");
  EXPECT_EQ(issue.key, "parallel.algorithm");
  EXPECT_EQ(issue.line, 2);
  EXPECT_EQ(issue.message,
            "must be one of: ring, mpi, hierarchical, shm, naive, shm-sharded; got \"tree\"");
  EXPECT_EQ(onlyIssueOf("[data]\ndataset = \"mnist\"\n").message,
            "must be one of: fashion-mnist, spirals, moons, text; got \"mnist\"");
}

TEST(JobSpec, ReportsEveryProblemInFileOrder) {
  const std::string text =
      "[train]\n"
      "lr = -1\n"           // 2: out of range
      "epochs = \"two\"\n"  // 3: wrong type
      "[parallel]\n"
      "algorithm = \"tree\"\n"  // 5: not in the set
      "[gpu]\n"                 // 6: unknown section
      "[model]\n"
      "layer = [1]\n";  // 8: unknown key
  auto issues = issuesOf(text);
  ASSERT_EQ(issues.size(), 5u);
  std::vector<std::string> keys;
  std::vector<int> lines;
  for (const auto& issue : issues) {
    keys.push_back(issue.key);
    lines.push_back(issue.line);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"train.lr", "train.epochs", "parallel.algorithm", "gpu",
                                            "model.layer"}));
  EXPECT_EQ(lines, (std::vector<int>{2, 3, 5, 6, 8}));

  try {
    parseJob(text, "job.toml");
    FAIL() << "expected a JobError";
  } catch (const JobError& error) {
    EXPECT_EQ(error.issues().size(), 5u);
    EXPECT_THAT(error.what(), HasSubstr("job.toml:2:6: train.lr: must be > 0"));
    EXPECT_THAT(error.what(), HasSubstr("job.toml:8:1: model.layer: unknown key"));
  }
}

TEST(JobSpec, SyntaxErrorHasALine) {
  JobIssue issue = onlyIssueOf("[train]\nepochs = 3\nlr = = 0.1\n");
  EXPECT_EQ(issue.file, "job.toml");
  EXPECT_EQ(issue.line, 3);
  EXPECT_GT(issue.column, 0);
  EXPECT_THAT(issue.message, HasSubstr("TOML syntax error"));
  EXPECT_THAT(issue.str(), HasSubstr("job.toml:3:"));
}

TEST(JobSpec, OverridesChangeValues) {
  const std::string text = readFile(RANKLAB_QUICKSTART_JOB);
  JobSpec job = parseJob(text, "quickstart.toml",
                         {"train.lr=0.1", "model.layers=[64,32]", "parallel.algorithm=mpi",
                          " train.epochs = 5 ", "name=my run", "fault.straggler_rank=3",
                          "data.path=/tmp/fm", "telemetry.spool=100", "train.lr=0.2"});
  EXPECT_EQ(job.train.lr, 0.2);  // the last --set of a key wins
  EXPECT_EQ(job.model.layers, (std::vector<int>{64, 32}));
  EXPECT_EQ(job.parallel.algorithm, "mpi");
  EXPECT_EQ(job.train.epochs, 5);
  EXPECT_EQ(job.name, "my run");
  EXPECT_EQ(job.fault.straggler_rank, 3);
  EXPECT_EQ(job.data.path, "/tmp/fm");
  EXPECT_EQ(job.telemetry.spool, 100);
  EXPECT_EQ(job.train.batch_size, 64);  // untouched keys keep the file's values

  // A string key keeps text that happens to look like another TOML type.
  EXPECT_EQ(parseJob("", "job.toml", {"name=2024-01-01"}).name, "2024-01-01");
  EXPECT_EQ(parseJob("", "job.toml", {"name=\"quoted\""}).name, "quoted");
}

TEST(JobSpec, BadOverrideNamesTheKey) {
  JobIssue issue = onlyIssueOf("", {"train.batch_size=0"});
  EXPECT_EQ(issue.file, "--set");
  EXPECT_EQ(issue.line, 0);
  EXPECT_EQ(issue.key, "train.batch_size");
  EXPECT_EQ(issue.message, "must be 1..65536, got 0");
  EXPECT_EQ(issue.str(), "--set: train.batch_size: must be 1..65536, got 0");

  EXPECT_EQ(onlyIssueOf("", {"train.lr=fast"}).message, "expected a number, got string");
  EXPECT_EQ(onlyIssueOf("", {"model.layers=[64,0]"}).file, "--set");
  EXPECT_EQ(onlyIssueOf("", {"parallel.algorithm=tree"}).message,
            "must be one of: ring, mpi, hierarchical, shm, naive, shm-sharded; got \"tree\"");

  JobIssue unknown = onlyIssueOf("", {"train.lrr=0.1"});
  EXPECT_EQ(unknown.key, "train.lrr");
  EXPECT_THAT(unknown.message, HasSubstr("did you mean lr?"));
  JobIssue section = onlyIssueOf("", {"trian.lr=0.1"});
  EXPECT_EQ(section.key, "trian.lr");
  EXPECT_THAT(section.message,
              HasSubstr("unknown section [trian]; did you mean [train]? allowed sections: data,"));
}

TEST(JobSpec, MalformedOverridesAreIssues) {
  JobIssue no_equals = onlyIssueOf("", {"train.lr"});
  EXPECT_EQ(no_equals.file, "--set");
  EXPECT_EQ(no_equals.key, "train.lr");
  EXPECT_THAT(no_equals.message, HasSubstr("expected section.key=value"));

  JobIssue no_section = onlyIssueOf("", {"epochs=3"});
  EXPECT_EQ(no_section.key, "epochs");
  EXPECT_THAT(no_section.message, HasSubstr("did you mean train.epochs?"));

  EXPECT_THAT(onlyIssueOf("", {".lr=3"}).message, HasSubstr("expected section.key=value"));
  EXPECT_THAT(onlyIssueOf("", {"train.=3"}).message, HasSubstr("expected section.key=value"));

  // File problems and --set problems are reported together, the file's first.
  auto issues = issuesOf("[train]\nepochs = 0\n", {"train.lr=0", "oops"});
  ASSERT_EQ(issues.size(), 3u);
  EXPECT_EQ(issues[0].file, "job.toml");
  EXPECT_EQ(issues[1].key, "train.lr");
  EXPECT_EQ(issues[2].key, "oops");
}

TEST(JobSpec, CommunicationStrategiesAndTheirKeys) {
  const JobSpec job = parseJob(
      "[parallel]\nranks = 3\nstrategy = \"ps-async\"\nservers = 2\nstaleness = 4\n"
      "delay_compensation = 0.04\n",
      "job.toml");
  EXPECT_EQ(job.parallel.strategy, "ps-async");
  EXPECT_EQ(processCount(job), 5) << "servers come on top of the training ranks";
  EXPECT_EQ(job.parallel.staleness, 4);
  EXPECT_EQ(parseJob(toTomlText(job), "again.toml"), job);
  EXPECT_EQ(processCount(parseJob("[parallel]\nranks = 3\nservers = 2\n", "job.toml")), 3);
  JobIssue issue = onlyIssueOf("[parallel]\nstrategy = \"gossip\"\n");
  EXPECT_THAT(issue.message, HasSubstr("allreduce, ps-sync, ps-async, local-sgd"));
  // Codecs compress the all-reduce and the parameter server's push and pull, but
  // local-sgd averages models, and powersgd needs two all-reduces per step.
  for (const char* strategy : {"ps-sync", "ps-async", "allreduce"}) {
    for (const char* codec : {"fp16", "topk", "randomk", "sign"}) {
      const std::string text = std::string("[parallel]\nstrategy = \"") + strategy +
                               "\"\n[compression]\ncodec = \"" + codec + "\"\n";
      EXPECT_EQ(parseJob(text, "job.toml").compression.codec, codec) << strategy;
    }
  }
  JobIssue local =
      onlyIssueOf("[parallel]\nstrategy = \"local-sgd\"\n[compression]\ncodec = \"fp16\"\n");
  EXPECT_EQ(local.key, "compression.codec");
  EXPECT_EQ(local.line, 4);
  EXPECT_THAT(local.message, HasSubstr("\"allreduce\", \"ps-sync\" or \"ps-async\""));
  for (const char* strategy : {"ps-sync", "ps-async"}) {
    JobIssue powersgd = onlyIssueOf(std::string("[parallel]\nstrategy = \"") + strategy +
                                    "\"\n[compression]\ncodec = \"powersgd\"\n");
    EXPECT_EQ(powersgd.key, "compression.codec");
    EXPECT_THAT(powersgd.message, HasSubstr(strategy));
    EXPECT_THAT(powersgd.message, HasSubstr("fp16, bf16, qsgd, topk, randomk, threshold or sign"));
  }
}

// shm-sharded applies where one model's gradients are summed in place: allreduce, no codec.
TEST(JobSpec, ShmShardedOnlyForUncompressedAllreduce) {
  EXPECT_EQ(parseJob("[parallel]\nalgorithm = \"shm-sharded\"\n", "job.toml").parallel.algorithm,
            "shm-sharded");
  for (const char* strategy : {"local-sgd", "ps-sync", "ps-async"}) {
    JobIssue issue = onlyIssueOf(std::string("[parallel]\nstrategy = \"") + strategy +
                                 "\"\nalgorithm = \"shm-sharded\"\n");
    EXPECT_EQ(issue.key, "parallel.algorithm");
    EXPECT_EQ(issue.line, 3);
    EXPECT_THAT(issue.message, HasSubstr(strategy));
    EXPECT_THAT(issue.message, HasSubstr("use ring, mpi, hierarchical, shm or naive"));
  }
  JobIssue codec =
      onlyIssueOf("[parallel]\nalgorithm = \"shm-sharded\"\n[compression]\ncodec = \"topk\"\n");
  EXPECT_EQ(codec.key, "parallel.algorithm");
  EXPECT_THAT(codec.message, HasSubstr("compression.codec = \"topk\""));
  JobIssue typo = onlyIssueOf("[parallel]\nalgorithm = \"shm-shard\"\n");
  EXPECT_THAT(typo.message, HasSubstr("shm-sharded"));
}

TEST(JobSpec, StragglerMustBeOneOfTheRanks) {
  JobIssue issue = onlyIssueOf("[parallel]\nranks = 4\n[fault]\nstraggler_rank = 4\n");
  EXPECT_EQ(issue.key, "fault.straggler_rank");
  EXPECT_EQ(issue.line, 4);
  EXPECT_THAT(issue.message, HasSubstr("0..3"));
  EXPECT_THAT(issue.message, HasSubstr("parallel.ranks is 4"));

  EXPECT_EQ(parseJob("[parallel]\nranks = 4\n[fault]\nstraggler_rank = 3\n", "job.toml")
                .fault.straggler_rank,
            3);
  // Shrinking the world from the command line makes the file's straggler invalid.
  JobIssue shrunk =
      onlyIssueOf("[parallel]\nranks = 4\n[fault]\nstraggler_rank = 3\n", {"parallel.ranks=2"});
  EXPECT_EQ(shrunk.file, "job.toml");
  EXPECT_EQ(shrunk.line, 4);
  // An invalid ranks value is reported once, not again as a straggler problem.
  EXPECT_EQ(onlyIssueOf("[parallel]\nranks = 0\n[fault]\nstraggler_rank = 3\n").key,
            "parallel.ranks");
}

TEST(JobSpec, TomlTextRoundTrips) {
  EXPECT_EQ(parseJob(toTomlText(JobSpec{}), "round.toml"), JobSpec{});

  JobSpec job;
  job.name = "tricky \"name\" \\ with\ttabs and é";  // control characters but tab: refused
  job.data.path = "C:\\data";
  job.data.train_limit = 1000;
  job.data.test_limit = 9223372036854775807;
  job.model.layers = {1, 65536, 7};
  job.train.epochs = 10000;
  job.train.lr = 1.0 / 3.0;
  job.train.momentum = 0.1 + 0.2;
  job.train.weight_decay = 1e-7;
  job.train.seed = 4294967297ull;
  job.train.max_steps = 123;
  job.parallel.ranks = 8;
  job.parallel.algorithm = "mpi";
  job.parallel.threads = 3;
  job.fault.straggler_rank = 7;
  job.fault.straggler_delay_ms = 250;
  job.telemetry.heartbeat_ms = 50;
  job.telemetry.spool = 1000000;
  const std::string text = toTomlText(job);
  EXPECT_EQ(parseJob(text, "round.toml"), job) << text;
  EXPECT_EQ(toTomlText(parseJob(text, "round.toml")), text);

  job.train.lr = 3.0;  // a whole-number double must stay a float in the text
  EXPECT_THAT(toTomlText(job), HasSubstr("lr = 3.0\n"));
  EXPECT_EQ(parseJob(toTomlText(job), "round.toml"), job);
}

TEST(JobSpec, TomlTextWritesEveryKeyInSectionOrder) {
  const std::string text = toTomlText(JobSpec{});
  size_t last = 0;
  for (const char* heading : {"name = \"job\"", "[data]", "[model]", "[train]", "[parallel]",
                              "[compression]", "[amp]", "[fault]", "[telemetry]"}) {
    const size_t at = text.find(heading);
    ASSERT_NE(at, std::string::npos) << heading;
    EXPECT_GE(at, last) << heading;
    last = at;
  }
  for (const char* key : {"train_limit = 0", "layers = [256, 128]", "weight_decay = 0.0",
                          "max_steps = 0", "threads = 0", "codec = \"none\"", "dtype = \"fp32\"",
                          "straggler_rank = -1", "spool = 4096"}) {
    EXPECT_THAT(text, HasSubstr(key));
  }
}

TEST(JobSpec, MissingFileNamesPathAndCause) {
  const std::string path = "/nonexistent/ranklab/job.toml";
  try {
    loadJob(path);
    FAIL() << "expected a JobError";
  } catch (const JobError& error) {
    ASSERT_EQ(error.issues().size(), 1u);
    EXPECT_EQ(error.issues()[0].file, path);
    EXPECT_EQ(error.issues()[0].line, 0);
    EXPECT_THAT(error.what(), HasSubstr(path));
    EXPECT_THAT(error.what(), HasSubstr("cannot open: no such file or directory"));
  }
  EXPECT_THROW(loadJob("/"), JobError);  // a folder cannot be read as a file
}

// The first message of loadJob's refusal of `path`, and that it came within a second.
std::string jobRefusal(const std::string& path) {
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    loadJob(path);
  } catch (const JobError& e) {
    message = e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << path;
  return message;
}

// Issue 57, item 5: `validate /dev/zero` read 7 GB and grew; a FIFO blocked for ever.
TEST(JobSpec, DevicesFifosAndHugeFilesAreRefusedWithinASecond) {
  ranklab::testing::TempFolder folder;
  const std::string fifo = folder.file("job.toml");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string huge = folder.file("huge.toml");
  std::ofstream(huge) << "name = \"x\"\n";
  std::filesystem::resize_file(huge, uint64_t{7} << 30);  // sparse: nothing is written
  EXPECT_EQ(jobRefusal("/dev/zero"), "/dev/zero: is a character device, not a regular file");
  EXPECT_EQ(jobRefusal(fifo), fifo + ": is a FIFO (a named pipe), not a regular file");
  EXPECT_EQ(jobRefusal(huge), huge + ": is 7 GiB; job files are limited to 16 MiB");
}

TEST(JobSpec, AJobFileThisAccountMayNotReadSaysPermissionDenied) {
  if (!ranklab::testing::canBecomeNobody()) GTEST_SKIP() << "needs root to become nobody";
  ranklab::testing::TempFolder folder;
  std::filesystem::permissions(folder.path(), std::filesystem::perms(0755));
  const std::string secret = folder.file("job.toml");
  std::ofstream(secret) << "name = \"x\"\n";
  ASSERT_EQ(chmod(secret.c_str(), 0), 0);
  EXPECT_TRUE(ranklab::testing::asNobody(
      [&] { return jobRefusal(secret) == secret + ": cannot open: permission denied"; }));
}

TEST(JobSpec, IssueTextOmitsMissingParts) {
  EXPECT_EQ((JobIssue{"a.toml", 3, 7, "train.lr", "bad"}).str(), "a.toml:3:7: train.lr: bad");
  EXPECT_EQ((JobIssue{"--set", 0, 0, "train.lr", "bad"}).str(), "--set: train.lr: bad");
  EXPECT_EQ((JobIssue{"a.toml", 0, 0, "", "cannot open"}).str(), "a.toml: cannot open");
}

TEST(JobSpec, CompressionKeysAreCheckedAndRoundTrip) {
  JobSpec job = parseJob(
      "", "c.toml",
      {"compression.codec=topk", "compression.ratio=0.005", "compression.error_feedback=false",
       "compression.value_dtype=fp16", "compression.bits=2", "compression.rank=4",
       "compression.momentum_correction=false"});
  EXPECT_EQ(job.compression.codec, "topk");
  EXPECT_DOUBLE_EQ(job.compression.ratio, 0.005);
  EXPECT_FALSE(job.compression.error_feedback);
  EXPECT_FALSE(job.compression.momentum_correction);
  EXPECT_EQ(job.compression.value_dtype, ValueDtype::kFp16);
  EXPECT_EQ(parseJob(toTomlText(job), "round.toml"), job);

  EXPECT_THAT(onlyIssueOf("[compression]\ncodec = \"zip\"\n").message,
              HasSubstr("must be one of: none, fp16, bf16, qsgd, topk, randomk, threshold, "
                        "sign, powersgd; got \"zip\""));
  EXPECT_THAT(onlyIssueOf("[compression]\nerror_feedback = 1\n").message,
              HasSubstr("expected true or false, got integer"));
  EXPECT_THAT(onlyIssueOf("[compression]\nratio = 0\n").message, HasSubstr("must be > 0"));
  EXPECT_THAT(onlyIssueOf("[compression]\nbits = 9\n").message, HasSubstr("must be 2..8"));
}

}  // namespace
}  // namespace ranklab
