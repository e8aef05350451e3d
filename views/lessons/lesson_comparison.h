// The runs of one lesson side by side: each stored run's answer in one table, with the
// settings on which the runs differ (the variants' keys, or anything the learner changed),
// so lesson 1's algorithms, lesson 4's schedules or lesson 9's ZeRO stages read as one
// comparison instead of run by run. No Qt widgets: tested alone.
#pragma once

#include <QString>
#include <vector>

#include "views/lessons/lesson.h"

namespace ranklab {

struct ComparedLessonRun {
  const LessonRun* run = nullptr;
  LessonAnswer answer;  // answer.error set: listed with the reason, not compared
};

// HTML: a row per run (in the order given), its differing settings, the measured value, the
// formula's and their ratio, and `time` (the median step, ms) from its step rows.
QString lessonComparisonHtml(const Lesson& lesson, const std::vector<ComparedLessonRun>& runs);

}  // namespace ranklab
