// RankWatch on real processes: a sleeping child is alive, a SIGSTOPped one is hung once the
// hang limit passes (and named stopped), a killed one is dead after the Bye grace; and
// mpirun's own words for how a rank ended.
#include "launch/rank_watch.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace ranklab {
namespace {

telemetry::Envelope helloFrom(int rank, pid_t pid) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  telemetry::Envelope e;
  e.set_rank(rank);
  e.mutable_hello()->set_host(host);
  e.mutable_hello()->set_pid(pid);
  return e;
}

TEST(RankWatch, TellsAWaitingRankFromAStoppedAndADeadOne) {
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  ASSERT_GT(child, 0);
  using Clock = RankWatch::Clock;
  RankWatch watch(2, std::chrono::seconds(1));
  const auto start = Clock::now();
  watch.heard(helloFrom(0, child), start);
  telemetry::Envelope step;
  step.set_rank(1);
  step.mutable_step()->set_step(7);
  watch.heard(step, start);
  for (int i = 0; i < 100 && processState(child) != "sleeping"; ++i)  // on its way to pause()
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(processState(child), "sleeping");
  EXPECT_FALSE(watch.check(start + std::chrono::milliseconds(500)));

  // Rank 1 keeps beating; rank 0 stops and goes quiet past the limit.
  kill(child, SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  telemetry::Envelope beat;
  beat.set_rank(1);
  beat.mutable_heartbeat();
  watch.heard(beat, start + std::chrono::milliseconds(1500));
  const auto hung = watch.check(start + std::chrono::milliseconds(1600));
  ASSERT_TRUE(hung);
  EXPECT_EQ(hung->rank, 0);
  EXPECT_TRUE(hung->hung);
  EXPECT_EQ(hung->process, "stopped (SIGSTOP)");

  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(processState(child), "gone");
  const auto now = Clock::now();
  EXPECT_FALSE(watch.check(now)) << "its Bye may still be on the wire";
  const auto dead = watch.check(now + RankWatch::kByeGrace);
  ASSERT_TRUE(dead);
  EXPECT_EQ(dead->rank, 0);
  EXPECT_FALSE(dead->hung);
  EXPECT_EQ(watch.check(now + RankWatch::kByeGrace)->last_step, -1);
}

// A rank that has sent nothing yet is starting, not hung: it gets kStartupLimit (or the
// hang limit, if longer); once heard from, the hang limit alone.
TEST(RankWatch, GivesARankStillStartingTheStartupLimit) {
  using Clock = RankWatch::Clock;
  RankWatch watch(2, std::chrono::seconds(10));
  const auto start = Clock::now();
  telemetry::Envelope beat;
  beat.set_rank(1);
  beat.mutable_heartbeat();
  watch.heard(beat, start);
  const auto later = start + std::chrono::seconds(30);
  watch.heard(beat, later);
  EXPECT_FALSE(watch.check(later)) << "rank 0 is still within its start-up limit";
  const auto late = start + RankWatch::kStartupLimit + std::chrono::seconds(1);
  watch.heard(beat, late);
  const auto hung = watch.check(late);
  ASSERT_TRUE(hung);
  EXPECT_EQ(hung->rank, 0);
  EXPECT_TRUE(hung->hung);
  EXPECT_EQ(hung->process, "unknown: it never said hello");
  EXPECT_TRUE(hung->starting);
  // Rank 1, heard from, is held to the 10 s limit.
  const auto quiet = late + std::chrono::seconds(11);
  telemetry::Envelope hello;
  hello.set_rank(0);
  hello.mutable_hello()->set_host("elsewhere");
  watch.heard(hello, quiet);
  const auto quiet1 = watch.check(quiet);
  ASSERT_TRUE(quiet1);
  EXPECT_EQ(quiet1->rank, 1);
  EXPECT_FALSE(quiet1->starting);
}

TEST(MpirunVerdict, ReadsTheSignalOrTheExitCodeOfARank) {
  MpirunVerdict verdict;
  verdict.read(
      "mpirun noticed that process rank 2 with PID 0 on node vm exited on signal 9 (Killed).");
  verdict.read("  Process name: [[4091,1],3]");
  verdict.read("  Exit code:    3");
  EXPECT_EQ(verdict.causeOf(2), "signal 9 (Killed)");
  EXPECT_EQ(verdict.causeOf(3), "exit code 3");
  EXPECT_EQ(verdict.causeOf(1), "");
}

TEST(MpirunVerdict, KnowsWhenMpirunIsAbortingByItself) {
  MpirunVerdict verdict;
  verdict.read("Primary job  terminated normally, but 1 process returned");
  EXPECT_FALSE(verdict.aborting());
  verdict.read("a non-zero exit code. Per user-direction, the job has been aborted.");
  EXPECT_TRUE(verdict.aborting());
}

}  // namespace
}  // namespace ranklab
