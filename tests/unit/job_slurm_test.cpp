// [launch] under Slurm: the keys read and written back, and each check naming its key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/job/job_file.h"
#include "engine/job/job_key_relevance.h"

namespace ranklab {
namespace {

using ::testing::HasSubstr;

JobIssue onlySlurmIssue(const std::string& launch_keys) {
  const auto issues =
      checkJob("[launch]\nscheduler = \"slurm\"\n" + launch_keys, "job.toml", {"parallel.ranks=2"});
  EXPECT_EQ(issues.size(), 1u) << launch_keys;
  return issues.empty() ? JobIssue{} : issues.front();
}

TEST(JobSlurm, TheKeysAreReadAndWrittenBack) {
  const JobSpec job = parseJob(
      "[launch]\nscheduler = \"slurm\"\npartition = \"gpu\"\nnodes = 2\ntime_limit = \"1:30:00\"\n"
      "account = \"lab-7\"\nsbatch = [\"--qos=short\", \"--exclusive\"]\n",
      "job.toml");
  EXPECT_TRUE(runsUnderSlurm(job));
  EXPECT_TRUE(runsOnHosts(job)) << "Slurm's nodes are other machines: the job goes inline";
  EXPECT_EQ(job.launch.partition, "gpu");
  EXPECT_EQ(job.launch.nodes, 2);
  EXPECT_EQ(job.launch.sbatch, (std::vector<std::string>{"--qos=short", "--exclusive"}));
  EXPECT_EQ(parseJob(toTomlText(job), "again.toml"), job);
  EXPECT_FALSE(runsUnderSlurm(JobSpec{})) << "the default is local";
}

TEST(JobSlurm, AnUnknownSchedulerIsNamedWithTheChoices) {
  const auto issues = checkJob("[launch]\nscheduler = \"pbs\"\n", "job.toml");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].key, "launch.scheduler");
  EXPECT_THAT(issues[0].message, HasSubstr("local, slurm"));
}

TEST(JobSlurm, HostsAreSlurmsToChoose) {
  const JobIssue issue = onlySlurmIssue("hosts = [\"a:2\"]\n");
  EXPECT_EQ(issue.key, "launch.hosts");
  EXPECT_THAT(issue.message, HasSubstr("Slurm places the ranks"));
}

TEST(JobSlurm, ATimeLimitIsInSlurmsForms) {
  for (const char* ok : {"30", "1:30:00", "2-12", "2-12:30", "UNLIMITED"})
    EXPECT_TRUE(
        checkJob(std::string("[launch]\nscheduler = \"slurm\"\ntime_limit = \"") + ok + "\"\n",
                 "job.toml")
            .empty())
        << ok;
  const JobIssue issue = onlySlurmIssue("time_limit = \"90 minutes\"\n");
  EXPECT_EQ(issue.key, "launch.time_limit");
  EXPECT_THAT(issue.message, HasSubstr("got \"90 minutes\""));
}

TEST(JobSlurm, MoreNodesThanProcessesIsRefused) {
  const JobIssue issue = onlySlurmIssue("nodes = 3\n");
  EXPECT_EQ(issue.key, "launch.nodes");
  EXPECT_THAT(issue.message, HasSubstr("3 nodes for 2 processes"));
}

TEST(JobSlurm, SbatchOptionsRanklabSetsAreNamed) {
  const JobIssue issue = onlySlurmIssue("sbatch = [\"--qos=short\", \"--ntasks=8\"]\n");
  EXPECT_EQ(issue.key, "launch.sbatch");
  EXPECT_THAT(issue.message, HasSubstr("\"--ntasks=8\" is set by parallel.ranks"));
  EXPECT_EQ(onlySlurmIssue("sbatch = [\"qos=short\"]\n").key, "launch.sbatch");
  EXPECT_EQ(onlySlurmIssue("partition = \"a b\"\n").key, "launch.partition");
}

TEST(JobSlurm, SlurmsKeysApplyOnlyUnderSlurm) {
  EXPECT_FALSE(keyApplies("launch.partition", {}));
  EXPECT_TRUE(keyApplies("launch.hosts", {}));
  const JobValues slurm{{"launch.scheduler", "slurm"}};
  for (const char* key :
       {"launch.partition", "launch.nodes", "launch.time_limit", "launch.account", "launch.sbatch"})
    EXPECT_TRUE(keyApplies(key, slurm)) << key;
  EXPECT_FALSE(keyApplies("launch.hosts", slurm));
  EXPECT_FALSE(keyApplies("launch.hostfile", slurm));
}

}  // namespace
}  // namespace ranklab
