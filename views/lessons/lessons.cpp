#include "views/lessons/lesson.h"

#include "engine/job/job_file.h"
#include "engine/job/stored_job.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>

namespace ranklab {

// One line a lesson: its maker, defined in its own file.
Lesson makeRingAllreduceLesson();
Lesson makeParameterServerLesson();
Lesson makeStragglerLesson();
Lesson makeBucketingLesson();
Lesson makeCompressionLesson();
Lesson makeMixedPrecisionLesson();
Lesson makePipelineLesson();
Lesson makeFailureLesson();
Lesson makeZeroLesson();
Lesson makeTensorLesson();
Lesson makeTransformerMemoryLesson();
Lesson makeThreeDLesson();
Lesson makeChooseLayoutLesson();

const std::vector<Lesson>& lessons() {
  // In teaching order.
  static const std::vector<Lesson> all = {
      makeRingAllreduceLesson(), makeParameterServerLesson(),   makeStragglerLesson(),
      makeBucketingLesson(),     makeCompressionLesson(),       makeMixedPrecisionLesson(),
      makePipelineLesson(),      makeFailureLesson(),           makeZeroLesson(),
      makeTensorLesson(),        makeTransformerMemoryLesson(), makeThreeDLesson(),
      makeChooseLayoutLesson()};
  return all;
}

int lessonIndex(const QString& id) {
  for (size_t i = 0; i < lessons().size(); ++i)
    if (lessons()[i].id == id) return int(i);
  return -1;
}

QStringList lessonIds() {
  QStringList ids;
  for (const Lesson& lesson : lessons()) ids << lesson.id;
  return ids;
}

double medianOf(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

double numberBefore(const std::string& text, const std::string& suffix) {
  const size_t at = text.find(suffix);
  if (at == std::string::npos) return std::numeric_limits<double>::quiet_NaN();
  size_t begin = at;
  while (begin > 0 &&
         (std::isdigit(static_cast<unsigned char>(text[begin - 1])) || text[begin - 1] == '.'))
    --begin;
  if (begin == at) return std::numeric_limits<double>::quiet_NaN();
  return std::stod(text.substr(begin, at - begin));
}

std::optional<JobSpec> jobOrError(const LessonRun& run, LessonAnswer& answer) {
  StoredJob stored = storedJobOf(run.run);
  if (!stored.job) answer.error = QString::fromStdString(stored.error);
  return std::move(stored.job);
}

std::function<LessonAnswer(const LessonRun&)> withJob(LessonAnswer (*answer)(const LessonRun&,
                                                                             const JobSpec&)) {
  return [answer](const LessonRun& run) {
    LessonAnswer a;
    const std::optional<JobSpec> job = jobOrError(run, a);
    return job ? answer(run, *job) : a;
  };
}

int variantOf(const Lesson& lesson, const LessonRun& run) {
  int best = 0;
  try {
    const std::string where = "run " + std::to_string(run.run.id) + "'s job";
    const JobSpec job = requireStoredJob(run.run);
    size_t most = 0;
    for (size_t v = 0; v < lesson.variants.size(); ++v) {
      QStringList overrides = lesson.variants[v].overrides;
      if (size_t(overrides.size()) <= most) continue;
      JobOverrides sets;
      for (const QString& o : overrides) sets.push_back(o.toStdString());
      if (parseJob(run.run.job_toml, where, sets) == job) best = int(v), most = sets.size();
    }
  } catch (const std::exception&) {
    // A job the variants cannot be applied to is the preset's as far as the page knows.
  }
  return best;
}

const EventRow* firstEvent(const LessonRun& run, const std::string& kind) {
  for (const EventRow& e : run.events)
    if (e.kind == kind) return &e;
  return nullptr;
}

}  // namespace ranklab
