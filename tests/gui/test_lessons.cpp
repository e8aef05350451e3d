// The lessons without a window: every lesson has its preset and the preset is a valid job;
// a run that cannot answer a lesson gets a reason naming what is missing, never a number.
#include <QSet>
#include <QtTest>
#include <cmath>

#include "engine/job/job_file.h"
#include "views/lessons/layout_ranking.h"
#include "views/lessons/lesson.h"

using namespace ranklab;

namespace {

// A finished 4-rank all-reduce run of the default job, with no steps yet.
LessonRun defaultRun() {
  LessonRun run;
  run.run.id = 7;
  run.run.world = 4;
  run.run.strategy = "allreduce";
  run.run.job_toml = toTomlText(JobSpec{});
  return run;
}

const Lesson& lesson(const char* id) {
  return lessons()[size_t(lessonIndex(QString::fromLatin1(id)))];
}

// A done run of choose-layout's variant `v` (origin `origin`) whose 2 ranks' steps end
// every `period_ms`.
LessonRun layoutRun(int64_t id, int v, const std::string& origin, int64_t period_ms) {
  const Lesson& l = lesson("choose-layout");
  JobOverrides sets;
  for (const QString& o : l.variants[size_t(v)].overrides) sets.push_back(o.toStdString());
  LessonRun run;
  run.run.id = id;
  run.run.status = "done";
  run.run.origin = origin;
  run.run.job_toml =
      toTomlText(loadJob(RANKLAB_SOURCE_DIR "/resources/jobs/lessons/choose-layout.toml", sets));
  for (int rank = 0; rank < 2; ++rank)
    for (int step = 1; step <= 10; ++step) {
      StepRow s;
      s.rank = rank;
      s.step = step;
      s.time_ns = step * period_ms * 1000000;
      run.steps.push_back(s);
    }
  return run;
}

}  // namespace

class LessonsTest : public QObject {
  Q_OBJECT

 private slots:
  void everyLessonHasAValidPreset() {
    QSet<QString> ids;
    for (const Lesson& l : lessons()) {
      QVERIFY2(!ids.contains(l.id), qPrintable(l.id));
      ids << l.id;
      QVERIFY(!l.text.isEmpty() && !l.question.isEmpty() && l.answer);
      const std::string preset = std::string(RANKLAB_SOURCE_DIR) + "/resources/jobs/lessons/" +
                                 l.id.toStdString() + ".toml";
      try {
        const JobSpec job = loadJob(preset);
        QCOMPARE(QString::fromStdString(job.name), QStringLiteral("lesson-") + l.id);
      } catch (const std::exception& e) {
        QFAIL(e.what());
      }
    }
    QCOMPARE(lessonIndex(QStringLiteral("no-such-lesson")), -1);
  }

  void aRunThatCannotAnswerIsToldWhy() {
    LessonRun run = defaultRun();
    QVERIFY(lesson("ring-allreduce").answer(run).error.contains("no all-reduce"));
    QVERIFY(lesson("parameter-server").answer(run).error.contains("no parameter server loads"));
    QVERIFY(lesson("straggler").answer(run).error.contains("two ranks"));
    QVERIFY(lesson("compression").answer(run).error.contains("\"none\""));
    QVERIFY(lesson("failure").answer(run).error.contains("no failure and restart"));
    run.run.job_toml = "[train\n";  // not TOML
    const LessonAnswer broken = lesson("compression").answer(run);
    QVERIFY2(broken.error.contains("run 7"), qPrintable(broken.error));  // names the run's job
  }

  void ringAnswerComesFromTheRowsNotTheFormula() {
    LessonRun run = defaultRun();
    for (int rank = 0; rank < 4; ++rank) {
      StepRow s;
      s.rank = rank;
      s.step = 1;
      s.allreduces = 2;
      s.bytes_tx = 6000 + 2 * rank;  // 3000 + rank per all-reduce
      s.mem_params = 2000;
      run.steps.push_back(s);
    }
    const LessonAnswer a = lesson("ring-allreduce").answer(run);
    QVERIFY(a.error.isEmpty());
    QCOMPARE(a.formula, 3000.0);   // 2 * 3 / 4 * 2000
    QCOMPARE(a.measured, 3001.5);  // the mean of 3000..3003
  }

  void numbersAreReadFromEventTexts() {
    QCOMPARE(numberBefore("found 0.27 s after its last message", " s after its"), 0.27);
    QVERIFY(std::isnan(numberBefore("found soon after", " s after")));
    QCOMPARE(medianOf({3, 1, 2, 10}), 2.5);
  }

  // Choose a layout: the learner's rankings are the 6 orders of 3 layouts; each layout's
  // newest simulated and real runs are measured alike and ranked, the learner's guess beside.
  void layoutsAreRankedThreeWays() {
    const Lesson& l = lesson("choose-layout");
    QVERIFY(l.ranks_variants);
    const auto orders = rankingsOf(3);
    QCOMPARE(int(orders.size()), 6);
    QCOMPARE(orders[1], (std::vector<int>{0, 2, 1}));
    QCOMPARE(rankingText(l, orders[1]),
             QStringLiteral("data 4  <  tensor 2 × data 2  <  pipeline 2 × data 2"));
    QCOMPARE(ranksOf({0.3, 0.1, 0.2}), (std::vector<int>{3, 1, 2}));
    QCOMPARE(ranksOf({0.3, 0, 0.2}), (std::vector<int>{2, 0, 1}));

    // Newest first: variant 0 ran twice (the newer, run 9, counts); simulated, pipeline is
    // fastest; measured, data, then pipeline, then tensor, as the learner's orders[0] says.
    const std::vector<LessonRun> runs = {
        layoutRun(9, 0, "", 10),          layoutRun(8, 2, "", 30),
        layoutRun(7, 1, "", 20),          layoutRun(6, 0, "", 50),
        layoutRun(5, 2, "simulated", 25), layoutRun(4, 1, "simulated", 12),
        layoutRun(3, 0, "simulated", 15)};
    const std::vector<RankedVariant> ranked = rankVariants(l, runs, orders[1]);
    QCOMPARE(int(ranked.size()), 3);
    QCOMPARE(ranked[0].real_run, int64_t{9});
    QCOMPARE(ranked[0].simulated_run, int64_t{3});
    QCOMPARE(ranked[0].measured_s, 0.010);
    QCOMPARE(ranked[1].predicted_s, 0.012);
    QCOMPARE(ranked[0].guessed, 1);  // data, then tensor, then pipeline
    QCOMPARE(ranked[1].guessed, 3);
    QCOMPARE(ranked[2].guessed, 2);
    const QString html = layoutRankingHtml(rankVariants(l, runs, orders[0]));
    QVERIFY2(html.contains("10.00 ms") && html.contains("15.00 ms") && html.contains("+50 %") &&
                 html.contains("sim 4 · run 7"),
             qPrintable(html));
    QVERIFY2(html.contains("Your ranking matches the measurement; the simulator's does not."),
             qPrintable(html));
    // No guess, a layout not yet run: said so, not ranked.
    const QString none = layoutRankingHtml(rankVariants(l, {runs[1], runs[4]}, {}));
    QVERIFY2(none.contains("Not every layout has a measured run yet."), qPrintable(none));
    // No guess: only the simulator's ranking is judged.
    const QString unguessed = layoutRankingHtml(rankVariants(l, runs, {}));
    QVERIFY2(unguessed.contains("The simulator's ranking does not match the measurement."),
             qPrintable(unguessed));
  }
};

QTEST_MAIN(LessonsTest)
#include "test_lessons.moc"
