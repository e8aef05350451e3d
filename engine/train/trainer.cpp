// The data-parallel driver of a TrainingRun: every step of every epoch, a checkpoint when
// one is due, an evaluation after each epoch (and every train.eval_every steps inside one).
#include "engine/train/trainer.h"

#include "engine/train/training_run.h"

namespace ranklab {

TrainResult train(const JobSpec& job, Communicator& comm, const Dataset& train_set,
                  const Dataset& test_set, TrainObserver& observer) {
  TrainingRun run(job, comm, train_set, test_set, observer);
  for (int epoch = run.position().epoch; epoch <= job.train.epochs && !run.finished(); ++epoch) {
    while (run.stepsLeftIn(epoch) > 0 && !run.finished()) {
      run.step(epoch);
      if (run.checkpointDue()) run.checkpoint();
      if (run.evaluationDue()) run.evaluate(epoch, /*inside_epoch=*/true);
    }
    run.evaluate(epoch);
  }
  return run.finish();
}

}  // namespace ranklab
