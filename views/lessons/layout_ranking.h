// A lesson whose learner ranks its variants (lesson 13: three layouts of one GPT): the
// rankings to choose from, and the variants' stored runs side by side — the simulator's
// predicted step, the measured one, and three ranks: the learner's, the prediction's, the
// measurement's. No Qt widgets: tested alone.
#pragma once

#include <QString>
#include <QStringList>
#include <vector>

#include "views/lessons/lesson.h"

namespace ranklab {

// Every order of `n` variants, fastest first (each a list of variant indices), in
// lexicographic order: 6 for 3.
std::vector<std::vector<int>> rankingsOf(int n);
// "data 4  <  tensor 2 × data 2  <  pipeline 2 × data 2": the variants' labels in that order.
QString rankingText(const Lesson& lesson, const std::vector<int>& order);

struct RankedVariant {
  QString label;
  int64_t simulated_run = 0;  // 0: not simulated
  int64_t real_run = 0;       // 0: not run
  double predicted_s = 0;     // the simulated run's step (storage/analysis/step_measure.h)
  double measured_s = 0;      // the real run's, by the same measure
  int guessed = 0;            // the learner's rank, 1 = fastest; 0: none given
};

// Each variant's newest real and newest simulated run among `runs` (the lesson's, newest
// first), their steps measured; `order` the learner's ranking (empty: none).
std::vector<RankedVariant> rankVariants(const Lesson& lesson, const std::vector<LessonRun>& runs,
                                        const std::vector<int>& order);

// 1 for the smallest value, 2 for the next...; a value of 0 (not measured) ranks 0.
std::vector<int> ranksOf(const std::vector<double>& values);

// HTML: a row per variant (step predicted, measured, the error, the three ranks) and a
// sentence saying whose ranking matched the measurement.
QString layoutRankingHtml(const std::vector<RankedVariant>& variants);

}  // namespace ranklab
