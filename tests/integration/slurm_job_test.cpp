// What the launcher asks of Slurm and reads back from it, without a cluster: sbatch's
// arguments and script, scontrol's one-line record, and the words for how a job ended. The
// real cluster's test is tests/slurm/slurm_test.sh.
#include "launch/slurm_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "launch/follow_record.h"
#include "launch/host_placement.h"

namespace ranklab {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SlurmJob, SbatchGetsTheTasksTheKeysAndTheOutputFiles) {
  LaunchSpec launch;
  launch.scheduler = Scheduler::kSlurm;
  launch.partition = "gpu";
  launch.nodes = 2;
  launch.time_limit = "30";
  launch.account = "lab";
  launch.sbatch = {"--qos=short"};
  EXPECT_THAT(
      sbatchArguments(launch, 4, "ranklab-7", "/data/slurm/ranklab-7-"),
      ElementsAre("sbatch", "--parsable", "--job-name=ranklab-7", "--ntasks=4",
                  "--output=/data/slurm/ranklab-7-%j.out", "--error=/data/slurm/ranklab-7-%j.err",
                  "--no-requeue", "--export=ALL", "--nodes=2", "--partition=gpu", "--time=30",
                  "--account=lab", "--qos=short"));
  LaunchSpec bare;
  EXPECT_EQ(sbatchArguments(bare, 2, "r", "p").size(), 8u) << "no key: Slurm's defaults";
}

TEST(SlurmJob, TheScriptRunsTheCommandWordForWord) {
  const std::string script = batchScript({"mpirun", "-np", "2", "it's", "a b", "$HOME"});
  EXPECT_THAT(script, HasSubstr("#!/bin/sh\n"));
  EXPECT_THAT(script, HasSubstr("exec 'mpirun' '-np' '2' 'it'\\''s' 'a b' '$HOME'\n"));
}

TEST(SlurmJob, ScontrolsRecordIsRead) {
  const auto pending = parseScontrolJob(
      "JobId=12 JobName=ranklab-3 UserId=root(0) JobState=PENDING Reason=Resources "
      "Dependency=(null) ReqNodeList=(null) NodeList=(null) ExitCode=0:0 DerivedExitCode=0:0");
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->state, "PENDING");
  EXPECT_EQ(pending->reason, "Resources");
  EXPECT_EQ(pending->nodes, "") << "(null) is no node";
  EXPECT_EQ(pending->exit_code, "") << "not ended: no exit code yet";
  EXPECT_FALSE(pending->started());
  EXPECT_FALSE(pending->ended());

  const auto ended = parseScontrolJob(
      "JobId=12 JobState=TIMEOUT Reason=TimeLimit ReqNodeList=n9 NodeList=n[1-2] "
      "DerivedExitCode=0:0 ExitCode=0:15");
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->nodes, "n[1-2]") << "NodeList, not ReqNodeList";
  EXPECT_EQ(ended->exit_code, "0:15") << "ExitCode, not DerivedExitCode";
  EXPECT_TRUE(ended->started());
  EXPECT_TRUE(ended->ended());
  EXPECT_FALSE(parseScontrolJob("slurm_load_jobs error: Invalid job id specified"));
}

TEST(SlurmJob, HowAJobEndedIsSaidInWords) {
  SlurmJobState s{"NODE_FAIL", "NodeDown", "n2", "0:0"};
  EXPECT_EQ(slurmEndCause(s), "Slurm reports node n2 failed");
  s.state = "TIMEOUT";
  EXPECT_THAT(slurmEndCause(s), HasSubstr("time limit (launch.time_limit) on n2"));
  s.state = "CANCELLED";
  EXPECT_TRUE(slurmCancelled(s));
  EXPECT_EQ(slurmEndCause(s), "cancelled in Slurm (scancel)");
  s.state = "COMPLETED";
  EXPECT_EQ(slurmEndCause(s), "") << "a completed job's verdict is the ranks'";
  s = {"FAILED", "NonZeroExitCode", "n1", "3:0"};
  EXPECT_EQ(slurmEndCause(s), "Slurm ended the job FAILED (NonZeroExitCode) on n1, exit code 3:0");
}

// Slurm's nodes may be other machines: no shared-memory-only or loopback settings for
// mpirun, and telemetry to an address they can reach.
TEST(SlurmJob, MpirunInsideTheAllocationIsNotToldItIsOneMachine) {
  LaunchSpec launch;
  launch.scheduler = Scheduler::kSlurm;
  EXPECT_TRUE(placementArguments(launch).empty());
  launch.mca = {"btl_tcp_if_include=10.0.0.0/24"};
  EXPECT_THAT(placementArguments(launch),
              ElementsAre("--mca", "btl_tcp_if_include", "10.0.0.0/24"));
  launch.telemetry_address = "10.0.0.5";
  EXPECT_EQ(telemetryAddress(launch), "10.0.0.5");
  launch.telemetry_address.clear();
  EXPECT_FALSE(telemetryAddress(launch).empty());
}

// What a new launcher needs to take over a job goes only into this account's own file.
TEST(SlurmJob, AFollowRecordIsReadBackAndOnlyFromThisAccountsOwnFile) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("ranklab-follow-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = followRecordPath(dir, 7, "12");
  EXPECT_EQ(path, dir + "/ranklab-7-12.follow");
  const FollowRecord written{"12", "7-abc", "tcp://127.0.0.1:40000",
                             CollectorCurve{newCurveKeyPair(), newCurveKeyPair().public_key},
                             123456789};
  writeFollowRecord(path, written);
  struct stat info {};
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u) << "its keys admit telemetry as the run's";
  const auto read = readFollowRecord(path);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->wire_id, "7-abc");
  EXPECT_EQ(read->endpoint, "tcp://127.0.0.1:40000");
  EXPECT_EQ(read->time_offset_ns, 123456789);
  ASSERT_TRUE(read->curve);
  EXPECT_EQ(read->curve->server.secret_key, written.curve->server.secret_key);
  EXPECT_THROW(writeFollowRecord(path, written), std::runtime_error) << "never over a file";
  EXPECT_FALSE(readFollowRecord(dir + "/none.follow")) << "no file: nothing to take over";

  chmod(path.c_str(), 0644);
  EXPECT_THROW(readFollowRecord(path), std::runtime_error) << "readable by others: not read";
  const std::string link = dir + "/link.follow";
  std::filesystem::create_symlink(path, link);
  EXPECT_THROW(readFollowRecord(link), std::runtime_error) << "never through a link";
  std::ofstream(dir + "/bad.follow") << "job_id 12\n";
  chmod((dir + "/bad.follow").c_str(), 0600);
  EXPECT_THROW(readFollowRecord(dir + "/bad.follow"), std::runtime_error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ranklab
