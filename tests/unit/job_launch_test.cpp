// [launch]: hosts and hostfile, their checks against the job's processes, MCA entries, and
// the job as one command-line word for ranks on other hosts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/job/job_argument.h"
#include "engine/job/job_file.h"
#include "engine/job/job_key_relevance.h"
#include "engine/job/job_keys.h"

namespace ranklab {
namespace {

using ::testing::HasSubstr;

JobIssue onlyIssue(const std::string& text, const JobOverrides& overrides = {}) {
  const auto issues = checkJob(text, "job.toml", overrides);
  EXPECT_EQ(issues.size(), 1u);
  return issues.empty() ? JobIssue{} : issues.front();
}

TEST(JobLaunch, HostsWithSlotsAreReadAndWrittenBack) {
  const JobSpec job = parseJob(
      "[parallel]\nranks = 4\n[launch]\nhosts = [\"a:2\", \"b.lan:2\"]\n"
      "mca = [\"btl_tcp_if_include=10.0.0.0/24\"]\n",
      "job.toml");
  EXPECT_EQ(job.launch.hosts, (std::vector<std::string>{"a:2", "b.lan:2"}));
  EXPECT_TRUE(runsOnHosts(job));
  EXPECT_EQ(parseJob(toTomlText(job), "again.toml"), job);
  EXPECT_FALSE(runsOnHosts(JobSpec{})) << "the default is this machine";
}

TEST(JobLaunch, ABadHostEntryIsNamedWithTheForm) {
  const JobIssue issue = onlyIssue("[launch]\nhosts = [\"a:2\", \"b:zero\"]\n");
  EXPECT_EQ(issue.key, "launch.hosts");
  EXPECT_EQ(issue.line, 2);
  EXPECT_THAT(issue.message, HasSubstr("entry 2 must be \"name\" or \"name:slots\""));
  EXPECT_THAT(issue.message, HasSubstr("got \"b:zero\""));
}

TEST(JobLaunch, HostsMustOfferASlotForEveryProcess) {
  const JobIssue issue = onlyIssue("[launch]\nhosts = [\"a:2\", \"b\"]\n", {"parallel.ranks=4"});
  EXPECT_EQ(issue.key, "launch.hosts");
  EXPECT_THAT(issue.message, HasSubstr("offer 3 slot(s), and the job needs 4 processes"));
}

TEST(JobLaunch, HostsAndHostfileExcludeEachOther) {
  const JobIssue issue = onlyIssue("[launch]\nhosts = [\"a:2\"]\nhostfile = \"hosts.txt\"\n");
  EXPECT_EQ(issue.key, "launch.hostfile");
  EXPECT_THAT(issue.message, HasSubstr("not both"));
}

TEST(JobLaunch, AnMcaEntryNeedsNameEqualsValue) {
  const JobIssue issue = onlyIssue("[launch]\nmca = [\"btl tcp\"]\n");
  EXPECT_EQ(issue.key, "launch.mca");
  EXPECT_THAT(issue.message, HasSubstr("\"name=value\""));
}

TEST(JobArgument, TheJobSurvivesAsOneWord) {
  // (Control characters but tab are refused in every string: issue 33, item 9.)
  JobSpec job = parseJob("name = \"quotes \\\" and\\ttabs\"\n[train]\nlr = 0.125\n", "j.toml");
  const std::string word = jobArgument(job);
  EXPECT_EQ(
      word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="),
      std::string::npos);
  EXPECT_EQ(parseJobArgument(word), job);
  for (size_t cut = 1; cut <= 3; ++cut) {  // every padding length decodes
    job.name = std::string(cut, 'x');
    EXPECT_EQ(parseJobArgument(jobArgument(job)).name, job.name);
  }
}

TEST(JobArgument, AWordThatIsNotAJobIsNamed) {
  try {
    parseJobArgument("not*base64");
    FAIL() << "no error";
  } catch (const JobError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--job-text"));
  }
}

TEST(JobLaunch, ACommandIsReadAsItsRanksAndTheEngineKeysChangeNothing) {
  const std::string text =
      "[parallel]\nranks = 2\nstrategy = \"ps-sync\"\nservers = 1\n[launch]\n"
      "command = [\"python3\", \"train.py\", \"--epochs\", \"2\"]\nlauncher = \"mpirun\"\n";
  const JobSpec job = parseJob(text, "job.toml");
  EXPECT_EQ(job.launch.command, (std::vector<std::string>{"python3", "train.py", "--epochs", "2"}));
  EXPECT_EQ(job.launch.launcher, Launcher::kMpirun);
  EXPECT_TRUE(runsCommand(job));
  EXPECT_EQ(processCount(job), 2) << "a command's ranks only: no parameter server of the engine's";
  EXPECT_EQ(parseJob(toTomlText(job), "again.toml"), job);
  const JobValues values = jobValues(job);
  EXPECT_FALSE(keyApplies("model.kind", values));
  EXPECT_FALSE(keyApplies("parallel.strategy", values));
  EXPECT_TRUE(keyApplies("parallel.ranks", values));
  EXPECT_TRUE(keyApplies("telemetry.hang_limit_s", values));
  EXPECT_TRUE(keyApplies("launch.launcher", values));
  EXPECT_FALSE(keyApplies("launch.launcher", jobValues(JobSpec{}))) << "without a command";
  EXPECT_TRUE(keyApplies("model.kind", jobValues(JobSpec{})));
}

TEST(JobLaunch, ACommandsLauncherIsOneOfFourAndRanklabsOwnStaysOnThisMachine) {
  EXPECT_THAT(onlyIssue("[launch]\ncommand = [\"a\"]\nlauncher = \"srun\"\n").message,
              HasSubstr("ranklab, mpirun, torchrun, command"));
  EXPECT_THAT(onlyIssue("[launch]\ncommand = [\"\"]\n").message, HasSubstr("not empty"));
  const JobIssue hosts =
      onlyIssue("[parallel]\nranks = 2\n[launch]\ncommand = [\"a\"]\nhosts = [\"h:2\"]\n");
  EXPECT_EQ(hosts.key, "launch.hosts");
  EXPECT_THAT(hosts.message, HasSubstr("launch.launcher = \"mpirun\""));
  EXPECT_TRUE(checkJob("[parallel]\nranks = 2\n[launch]\ncommand = [\"a\"]\nhosts = [\"h:2\"]\n"
                       "launcher = \"mpirun\"\n",
                       "job.toml")
                  .empty());
}

}  // namespace
}  // namespace ranklab
