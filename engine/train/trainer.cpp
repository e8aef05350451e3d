#include "engine/train/trainer.h"

#include <chrono>
#include <thread>
#include <vector>

#include "engine/data/shard_loader.h"
#include "engine/model/mlp.h"
#include "engine/optim/sgd.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

namespace {

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<int> modelWidths(const JobSpec& job, const Dataset& data) {
  std::vector<int> widths{data.features};
  widths.insert(widths.end(), job.model.layers.begin(), job.model.layers.end());
  widths.push_back(data.classes);
  return widths;
}

// Test loss and accuracy over the whole test set: each rank scores its slice, then sum.
EvalStats evaluate(Mlp& model, Communicator& comm, const Dataset& test, int batch) {
  const int64_t begin = test.count * comm.rank() / comm.size();
  const int64_t end = test.count * (comm.rank() + 1) / comm.size();
  const BatchLoss part =
      model.evaluate(test.image(begin), test.labels.data() + begin, end - begin, batch);
  float totals[3] = {static_cast<float>(part.loss_sum), static_cast<float>(part.correct),
                     static_cast<float>(end - begin)};
  comm.allreduceSumNative(totals, 3);
  EvalStats stats;
  stats.test_loss = totals[2] > 0 ? totals[0] / totals[2] : 0;
  stats.test_accuracy = totals[2] > 0 ? totals[1] / totals[2] : 0;
  return stats;
}

}  // namespace

TrainResult train(const JobSpec& job, Communicator& comm, const Dataset& train_set,
                  const Dataset& test_set, TrainObserver& observer) {
  Mlp model(modelWidths(job, train_set), job.train.seed);
  Sgd optimizer(model.parameterCount(), job.train.momentum, job.train.weight_decay);
  auto gradient_sync = makeGradientSync(job, comm);
  ShardLoader loader(train_set, comm.rank(), comm.size(), job.train.batch_size, job.train.seed);
  if (loader.stepsPerEpoch() == 0) {
    throw std::invalid_argument("train.batch_size " + std::to_string(job.train.batch_size) + " x " +
                                std::to_string(comm.size()) + " ranks exceeds the " +
                                std::to_string(train_set.count) + " training samples");
  }
  const bool straggler =
      comm.rank() == job.fault.straggler_rank && job.fault.straggler_delay_ms > 0;
  if (straggler) {
    observer.onEvent("fault",
                     "straggler: +" + std::to_string(job.fault.straggler_delay_ms) +
                         " ms per step on rank " + std::to_string(comm.rank()),
                     0);
  }

  const int batch = job.train.batch_size;
  std::vector<float> images(static_cast<size_t>(batch) * train_set.features);
  std::vector<uint8_t> labels(batch);
  TrainResult result;
  int64_t eval_ns = 0;
  const int64_t loop_start = nowNs();
  for (int epoch = 1; epoch <= job.train.epochs; ++epoch) {
    loader.startEpoch(epoch);
    bool stop = false;
    for (int64_t i = 0; i < loader.stepsPerEpoch(); ++i) {
      StepStats s;
      s.step = ++result.steps;
      s.epoch = epoch;
      s.samples = batch;
      s.lr = job.train.lr;
      int64_t t = nowNs();
      loader.batch(i, images.data(), labels.data());
      s.data_ns = nowNs() - t;

      t = nowNs();
      const BatchLoss loss = model.forward(images.data(), labels.data(), batch);
      s.loss = loss.loss_sum / batch;
      s.forward_ns = nowNs() - t;

      t = nowNs();
      model.zeroGrads();
      model.backward(images.data(), labels.data(), batch);
      if (straggler)
        std::this_thread::sleep_for(std::chrono::milliseconds(job.fault.straggler_delay_ms));
      s.backward_ns = nowNs() - t;

      const SyncStats sync = gradient_sync->sync(model.grads(), model.parameterCount());
      s.wait_ns = sync.wait_ns;
      s.comm_ns = sync.comm_ns;
      s.bytes_tx = sync.bytes_tx;
      s.bytes_rx = sync.bytes_rx;
      s.bytes_raw = sync.bytes_raw;

      t = nowNs();
      optimizer.step(model.params(), model.grads(), job.train.lr);
      s.update_ns = nowNs() - t;
      observer.onStep(s);
      stop = job.train.max_steps > 0 && result.steps >= job.train.max_steps;
      if (stop) break;
    }
    const int64_t t = nowNs();
    result.last_eval = evaluate(model, comm, test_set, 1000);
    result.last_eval.step = result.steps;
    result.last_eval.epoch = epoch;
    eval_ns += nowNs() - t;
    observer.onEval(result.last_eval);
    if (stop) break;
  }
  result.train_ns = nowNs() - loop_start - eval_ns;
  return result;
}

}  // namespace ranklab
