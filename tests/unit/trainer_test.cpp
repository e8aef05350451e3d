// The training loop with ranks as threads over the in-memory transport.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "comm/memory/thread_communicator.h"
#include "engine/data/idx_dataset.h"
#include "engine/train/trainer.h"

namespace ranklab {
namespace {

class LossRecorder : public TrainObserver {
 public:
  void onStep(const StepStats& s) override { losses.push_back(s.loss); }
  void onEval(const EvalStats& e) override { evals.push_back(e); }
  std::vector<double> losses;
  std::vector<EvalStats> evals;
};

const Dataset& trainSet() {
  static const Dataset d = loadFashionMnist("/usr/share/datasets/fashion-mnist", "train", 4000);
  return d;
}
const Dataset& testSet() {
  static const Dataset d = loadFashionMnist("/usr/share/datasets/fashion-mnist", "t10k", 1000);
  return d;
}

JobSpec smallJob(int ranks, const std::string& algorithm) {
  JobSpec job;
  job.model.layers = {32};
  job.train.epochs = 2;
  job.train.batch_size = 25;
  job.parallel.ranks = ranks;
  job.parallel.algorithm = algorithm;
  return job;
}

std::vector<LossRecorder> trainWithThreads(const JobSpec& job) {
  ThreadRendezvous rendezvous(job.parallel.ranks);
  std::vector<LossRecorder> recorders(job.parallel.ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < job.parallel.ranks; ++r) {
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(rendezvous, r);
      train(job, comm, trainSet(), testSet(), recorders[r]);
    });
  }
  for (auto& t : threads) t.join();
  return recorders;
}

TEST(Trainer, SameSeedGivesTheSameLossCurveBitForBit) {
  const auto a = trainWithThreads(smallJob(2, "ring"));
  const auto b = trainWithThreads(smallJob(2, "ring"));
  ASSERT_EQ(a[0].losses.size(), 2u * 4000 / 2 / 25);
  EXPECT_EQ(a[0].losses, b[0].losses);
  EXPECT_EQ(a[1].losses, b[1].losses);
}

TEST(Trainer, LearnsAndEveryRankAgreesOnTheEvaluation) {
  const auto ranks = trainWithThreads(smallJob(3, "ring"));
  ASSERT_EQ(ranks[0].evals.size(), 2u);
  EXPECT_GT(ranks[0].evals.back().test_accuracy, 0.65);
  EXPECT_LT(ranks[0].evals.back().test_loss, ranks[0].losses.front());
  for (const auto& r : ranks)
    EXPECT_EQ(r.evals.back().test_accuracy, ranks[0].evals.back().test_accuracy);
}

TEST(Trainer, RingAndNativeAllreduceTrainAlike) {
  const auto ring = trainWithThreads(smallJob(2, "ring"));
  const auto native = trainWithThreads(smallJob(2, "mpi"));
  // Sums of two terms are order-independent, so the curves agree closely.
  ASSERT_EQ(ring[0].losses.size(), native[0].losses.size());
  for (size_t i = 0; i < ring[0].losses.size(); ++i) {
    ASSERT_NEAR(ring[0].losses[i], native[0].losses[i], 1e-4) << "step " << i + 1;
  }
}

TEST(Trainer, MaxStepsStopsEarlyAndStillEvaluates) {
  JobSpec job = smallJob(2, "ring");
  job.train.max_steps = 7;
  const auto ranks = trainWithThreads(job);
  EXPECT_EQ(ranks[0].losses.size(), 7u);
  EXPECT_EQ(ranks[0].evals.size(), 1u);
}

TEST(Trainer, BatchLargerThanTheShardIsAClearError) {
  JobSpec job = smallJob(1, "ring");
  job.train.batch_size = 5000;
  ThreadRendezvous rendezvous(1);
  ThreadCommunicator comm(rendezvous, 0);
  LossRecorder recorder;
  try {
    train(job, comm, trainSet(), testSet(), recorder);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("train.batch_size 5000"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ranklab
