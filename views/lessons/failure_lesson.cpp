// Lesson 8: a rank killed mid-run is found in a fraction of a second, the world restarts
// from the last checkpoint, and the steps since that checkpoint are trained again.
#include <QObject>
#include <algorithm>
#include <cmath>

#include "views/lessons/lesson.h"

namespace ranklab {

namespace {

QString failureText() {
  return QObject::tr(
      "<p>In data-parallel training every rank waits for every other one in each all-reduce, "
      "so one dead rank stops them all. The launcher watches each rank: a rank whose process "
      "is gone is <b>dead</b> (found within a second), one that is alive but silent past "
      "<tt>telemetry.hang_limit_s</tt> is <b>hung</b>. Either way it stops the world.</p>"
      "<p>With <tt>train.max_restarts</tt> it then <b>restarts</b> every rank from the last "
      "complete checkpoint, written every <tt>train.checkpoint_every</tt> = <i>c</i> steps. "
      "What was trained after that checkpoint is lost and trained again. A failure after "
      "step <i>f</i> repeats</p><p align=center><b><i>f</i> mod <i>c</i></b></p>"
      "<p>steps (up to <i>c</i>−1): checkpoints more often cost less work lost, but each one "
      "pauses training to write the model.</p>"
      "<p>The preset runs 4 ranks, checkpoints every 10 steps, and kills rank 2 after step 25. "
      "<b>Predict</b> how many steps are trained twice; the answer comes from the run's "
      "failure and restart events, with how long detection and the restart took.</p>");
}

LessonAnswer failureAnswer(const LessonRun& run) {
  LessonAnswer a;
  const EventRow* failure = firstEvent(run, "failure");
  const EventRow* restart = firstEvent(run, "restart");
  if (!failure || !restart) {
    a.error = QObject::tr("this run has no failure and restart (was it the lesson's preset?)");
    return a;
  }
  const std::optional<JobSpec> job = jobOrError(run, a);
  if (!job) return a;
  const int64_t every = job->train.checkpoint_every;
  a.measured = double(failure->step - restart->step);
  a.formula = every > 0 ? double(failure->step % every) : double(failure->step);
  a.formula_text = QObject::tr("f mod c = %1 mod %2").arg(failure->step).arg(every);
  const double found_s = numberBefore(failure->text, " s after its last message");
  const EventRow* resumed = firstEvent(run, "resumed");
  const double resumed_s =
      resumed ? numberBefore(resumed->text, " s after the failure") : std::nan("");
  a.detail = QObject::tr(
                 "<p>Rank %1 died after step %2 and was found <b>%3 s</b> after its "
                 "last message. Every rank restarted from the checkpoint of step %4 "
                 "and trained again <b>%5 s</b> after the failure was found.</p>"
                 "<p>The timeline below shows steps %4 to %6 from the records kept: "
                 "step %4, the failure and restart marked on rank %1's row, the time the "
                 "restart took (most of the width: a step takes milliseconds), then the "
                 "re-trained steps.</p>")
                 .arg(failure->rank)
                 .arg(failure->step)
                 .arg(found_s, 0, 'f', 2)
                 .arg(restart->step)
                 .arg(resumed_s, 0, 'f', 2)
                 .arg(failure->step + 1);
  // From the checkpoint to just after the failure: the gap the restart took, then the
  // re-trained steps.
  a.focus_step = std::max<int64_t>(1, restart->step);
  a.focus_steps = int(failure->step - restart->step) + 2;
  return a;
}

}  // namespace

Lesson makeFailureLesson() {
  return {
      .id = QStringLiteral("failure"),
      .title = QObject::tr("8. A rank fails: detection and restart"),
      .text = failureText(),
      .overrides = {QStringLiteral("train.checkpoint_path={tmp}/ranklab-lesson-failure.ckpt")},
      .question = QObject::tr("Steps trained twice after the failure:"),
      .unit = QObject::tr("steps"),
      .answer = failureAnswer,
  };
}

}  // namespace ranklab
