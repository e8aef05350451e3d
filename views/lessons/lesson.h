// A lesson of the Learn page: a few paragraphs with their formula, a preset that runs in
// seconds, the number the learner predicts first, and how the finished run's own records
// answer it, with the formula's value beside the measured one. No Qt widgets: tested alone.
//
// Adding a lesson: one file in views/lessons/ that defines a `Lesson make…Lesson()`, its
// preset in resources/jobs/lessons/, and its maker in the list in lessons.cpp.
#pragma once

#include <QString>
#include <QStringList>
#include <functional>
#include <optional>
#include <vector>

#include "engine/job/job_spec.h"
#include "storage/records.h"

namespace ranklab {

// What a lesson reads of its finished run.
struct LessonRun {
  RunRow run;
  std::vector<StepRow> steps;
  std::vector<EventRow> events;
  std::vector<ServerLoadRow> server_loads;
  std::vector<SpanRow> spans;  // passes, evaluations, the sampled steps' ring hops
};

// The run's answer to the lesson's question.
struct LessonAnswer {
  QString error;           // why this run cannot answer ("" when it can)
  double measured = 0;     // from the run's records
  double formula = 0;      // the textbook value for this run's settings
  QString formula_text;    // the formula with this run's numbers in it
  QString detail;          // HTML: how the measured value was found, per rank where it helps
  int64_t focus_step = 1;  // the replay starts here: where the lesson's point is visible
  int focus_steps = 3;     // and shows this many steps at once
};

// Another setting of the same job to run the lesson with, for comparison (lesson 1: the
// all-reduce algorithm). Its overrides go on top of the lesson's.
struct LessonVariant {
  QString label;
  QStringList overrides;
};

struct Lesson {
  QString id;  // "ring-allreduce": its preset is resources/jobs/lessons/<id>.toml
  QString title;
  QString text;             // 2–4 paragraphs of HTML, the formula among them
  QStringList overrides{};  // section.key=value on top of the preset; {tmp} = a temporary folder
  QString question;         // what the learner predicts before running
  QString unit;
  std::function<LessonAnswer(const LessonRun&)> answer;
  // Optional: HTML drawn from one step's records, shown under the replay and following it
  // (the ring's hops, chunk by chunk); "" when that step recorded nothing to show.
  std::function<QString(const LessonRun&, int64_t step)> step_view{};
  // Optional: the settings to compare; the first is the preset as it is. The answer reads
  // the run's own settings, so each variant is measured against its own formula.
  std::vector<LessonVariant> variants{};
  // Optional: the learner ranks the variants, fastest step first, instead of typing a
  // number; the lesson simulates every variant (`ranklab simulate`), runs each, and shows the
  // prediction, the learner's ranking and the measurement side by side (layout_ranking.h).
  bool ranks_variants = false;
};

// The variant `run` was run with: the one with the most overrides that leave its job as it
// is (applying them changes nothing); 0, the preset, when none other does.
int variantOf(const Lesson& lesson, const LessonRun& run);

// Every lesson, in teaching order.
const std::vector<Lesson>& lessons();
int lessonIndex(const QString& id);  // -1: no such lesson
QStringList lessonIds();

// Helpers the lessons share.
double medianOf(std::vector<double> values);
// The number right before `suffix` in `text` ("found 0.27 s after" with " s after"); NaN if none.
double numberBefore(const std::string& text, const std::string& suffix);
const EventRow* firstEvent(const LessonRun& run, const std::string& kind);
// The run's resolved job, as its ranks received it (engine/job/stored_job.h), or nothing with the
// reason in `answer.error`.
std::optional<JobSpec> jobOrError(const LessonRun& run, LessonAnswer& answer);
// The answer of a lesson that reads its run's job: the job read once for it, or the reason it
// cannot be read as the answer's error.
std::function<LessonAnswer(const LessonRun&)> withJob(LessonAnswer (*answer)(const LessonRun&,
                                                                             const JobSpec&));

}  // namespace ranklab
