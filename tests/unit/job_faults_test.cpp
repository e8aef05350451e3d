// [[faults]] in a job file: read, checked with the fault and key named, and written back.
#include <gtest/gtest.h>

#include "engine/job/job_file.h"
#include "engine/job/job_spec.h"

namespace ranklab {
namespace {

std::vector<std::string> messagesOf(const std::string& text) {
  std::vector<std::string> messages;
  for (const JobIssue& issue : checkJob(text, "job.toml"))
    messages.push_back(issue.key + ": " + issue.message);
  return messages;
}

TEST(JobFaults, ReadsEachTableAndWritesItBack) {
  const JobSpec job = parseJob(
      "[parallel]\nranks = 4\n"
      "[[faults]]\nrank = 2\nat_step = 40\naction = \"kill\"\n"
      "[[faults]]\nrank = 1\nat_step = 10\naction = \"slow\"\nms = 30\n"
      "[[faults]]\nrank = 3\nat_step = 5\naction = \"stop\"\nseconds = 2\n",
      "job.toml");
  ASSERT_EQ(job.faults.size(), 3u);
  EXPECT_EQ(job.faults[0], (InjectedFault{2, 40, FaultAction::kKill, 0, 0}));
  EXPECT_EQ(job.faults[1], (InjectedFault{1, 10, FaultAction::kSlow, 30, 0}));
  EXPECT_EQ(job.faults[2], (InjectedFault{3, 5, FaultAction::kStop, 0, 2}));
  // The resolved job the ranks read carries them.
  EXPECT_EQ(parseJob(toTomlText(job), "resolved.toml"), job);
  EXPECT_TRUE(parseJob("", "job.toml").faults.empty());
}

TEST(JobFaults, NamesTheFaultAndTheKeyThatIsWrong) {
  const std::pair<std::string, std::string> cases[] = {
      {"[[faults]]\nrank = 1\nat_step = 3\naction = \"explode\"\n",
       "faults[0].action: must be one of kill, stop, slow, exit, got \"explode\""},
      {"[[faults]]\nrank = 1\nat_step = 3\n",
       "faults[0].action: every [[faults]] table needs an action"},
      {"[[faults]]\nrank = 7\nat_step = 3\naction = \"kill\"\n",
       "faults[0].rank: must be one of the run's processes 0..1, got 7"},
      {"[[faults]]\nrank = 0\nat_step = 3\naction = \"slow\"\n",
       "faults[0].ms: action = \"slow\" needs ms"},
      {"[[faults]]\nrank = 0\nat_step = 3\naction = \"kill\"\nseconds = 4\n",
       "faults[0].seconds: applies to action = \"stop\" only"},
      {"[[faults]]\nrank = 0\nat_step = 3\naction = \"kill\"\nwhen = 4\n",
       "faults[0].when: unknown key \"when\" in [[faults]]; allowed keys: rank, at_step, action"},
      {"[[faults]]\nrank = 0\nat_step = -1\naction = \"kill\"\n", "faults[0].at_step: must be 0.."},
      {"faults = 3\n", "faults: expected [[faults]] tables"}};
  for (const auto& [text, expected] : cases) {
    const auto messages = messagesOf(text);
    ASSERT_EQ(messages.size(), 1u) << text;
    EXPECT_EQ(messages[0].find(expected), 0u) << text << "\n" << messages[0];
  }
}

}  // namespace
}  // namespace ranklab
