// The lessons without a window: every lesson has its preset and the preset is a valid job;
// a run that cannot answer a lesson gets a reason naming what is missing, never a number.
#include <QSet>
#include <QtTest>
#include <cmath>

#include "engine/job/job_file.h"
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
};

QTEST_MAIN(LessonsTest)
#include "test_lessons.moc"
