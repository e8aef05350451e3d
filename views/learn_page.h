// The Learn page: a list of lessons; each explains a mechanism with its formula, asks the
// learner for a prediction, runs its preset through the window's launcher, and answers with
// the number measured in that run beside the formula's, over a timeline of the run's own
// records that can be replayed step by step (play, pause, step, speed).
#pragma once

#include <QTimer>
#include <QWidget>
#include <optional>

#include "launch/job_runner.h"
#include "views/job_command.h"
#include "views/lessons/lesson.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QTextBrowser;

namespace ranklab {

class RunStore;
class TimelineView;
class VariantRuns;

class LearnPage : public QWidget {
  Q_OBJECT

 public:
  // `commands`: how a lesson that simulates its variants runs `ranklab simulate`.
  LearnPage(QString presets_dir, JobCommandOptions commands = {}, QWidget* parent = nullptr);

  void setDbPath(const QString& path);
  void selectLesson(int index);
  int currentLesson() const { return current_; }
  // The variant the next run uses (lesson.variants; 0 = the preset as it is).
  void selectVariant(int index);
  int currentVariant() const;  // -1 when the lesson has none
  // A lesson that ranks its variants: the learner's ranking, an index into rankings() (0 =
  // none chosen yet; i: rankings()[i - 1]), fastest first.
  void selectRanking(int index);
  const std::vector<std::vector<int>>& rankings() const { return rankings_; }
  bool runningVariants() const;  // a ranking lesson's simulations and runs are going
  // The run the window launched ended: answers the lesson if it was this page's run.
  void runEnded(const RunOutcome& outcome);
  // Answers the current lesson from a stored run (a replay); false, with the reason shown,
  // when the run cannot answer it.
  bool showRun(int64_t run_id);
  // The latest stored run of the current lesson's preset, or 0.
  int64_t lastLessonRun() const;
  bool replayLastRun();  // showRun(lastLessonRun()), or says there is none
  // Runs the current lesson's preset as the Run button does (its overrides, the chosen
  // variant, then `extra`), answered when it ends; no prediction needed (`--lesson ID --start`).
  void runLesson(const QStringList& extra = {});
  QString presetPath(const Lesson& lesson) const;

  const std::optional<LessonAnswer>& answer() const { return answer_; }
  TimelineView* timeline() const { return timeline_; }
  QString stepViewHtml() const;  // the lesson's view of the replayed step; "" when none
  // The stored runs of the lesson in one table (lessons/lesson_comparison.h); "" under two.
  QString comparisonHtml() const;
  int64_t replayStep() const { return replay_first_; }
  void stepReplay();  // one step on; stops at the run's last step
  void setPlaying(bool on);

 signals:
  // Load this preset (with these overrides) into the setup page and launch it.
  void runRequested(const QString& preset_path, const QStringList& overrides);
  // A ranking lesson's simulations and runs are all done (or one failed), and it is answered.
  void lessonFinished();

 private:
  QWidget* buildQuestion();
  QWidget* buildReplay();
  void showAnswer(const LessonAnswer& answer);
  // Reads the lesson's latest stored runs (kLessonRunsCompared) and tabulates their answers.
  void showComparison(RunStore& store);
  void drawReplay();
  void updateRunButton();
  void variantsFinished(const QList<qint64>& runs, const QString& error);
  std::vector<int> chosenRanking() const;  // empty: none chosen

  QString presets_dir_;
  QString db_path_;
  int current_ = -1;
  bool waiting_ = false;  // a run this page asked for is going
  QListWidget* list_;
  QLabel* title_;
  QTextBrowser* text_;
  QLabel* question_;
  QLineEdit* prediction_;
  QLabel* unit_;
  QPushButton* run_;
  QPushButton* replay_last_;
  QLabel* answer_label_;
  TimelineView* timeline_;
  QTextBrowser* step_view_;   // the lesson's step_view of the replayed step
  QTextBrowser* comparison_;  // the lesson's runs side by side
  QPushButton* play_;
  QComboBox* speed_;
  QComboBox* variant_;  // the lesson's variants, when it has some
  QComboBox* ranking_;  // a ranking lesson's orders of its variants
  std::vector<std::vector<int>> rankings_;
  VariantRuns* variant_runs_;
  QTimer replay_timer_;
  std::optional<LessonAnswer> answer_;
  LessonRun run_data_;
  int64_t replay_first_ = 1;
  int64_t last_step_ = 0;
  int replay_steps_ = 3;  // shown at once
};

}  // namespace ranklab
