#include "views/learn_page.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleValidator>
#include <QFile>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <cmath>

#include "storage/run_origin.h"
#include "storage/run_store.h"
#include "views/lessons/layout_ranking.h"
#include "views/lessons/lesson_comparison.h"
#include "views/models/timeline_data.h"
#include "views/timeline_view.h"
#include "views/variant_runs.h"

namespace ranklab {

namespace {

// "1,410,876" or "5"; the learner's and the run's numbers alike.
QString number(double value) {
  return std::abs(value - std::round(value)) < 1e-9 ? QStringLiteral("%L1").arg(qint64(value))
                                                    : QStringLiteral("%L1").arg(value, 0, 'f', 2);
}

}  // namespace

LearnPage::LearnPage(QString presets_dir, JobCommandOptions commands, QWidget* parent)
    : QWidget(parent),
      presets_dir_(std::move(presets_dir)),
      list_(new QListWidget(this)),
      title_(new QLabel(this)),
      text_(new QTextBrowser(this)),
      question_(new QLabel(this)),
      prediction_(new QLineEdit(this)),
      unit_(new QLabel(this)),
      run_(new QPushButton(tr("Run the lesson"), this)),
      replay_last_(new QPushButton(tr("Replay its last run"), this)),
      answer_label_(new QLabel(this)),
      timeline_(new TimelineView(this)),
      step_view_(new QTextBrowser(this)),
      comparison_(new QTextBrowser(this)),
      play_(new QPushButton(tr("Play"), this)),
      speed_(new QComboBox(this)),
      variant_(new QComboBox(this)),
      ranking_(new QComboBox(this)),
      variant_runs_(new VariantRuns(std::move(commands), this)) {
  connect(variant_runs_, &VariantRuns::runRequested, this, &LearnPage::runRequested);
  connect(variant_runs_, &VariantRuns::progress, this,
          [this](const QString& text) { answer_label_->setText(tr("<i>%1</i>").arg(text)); });
  connect(variant_runs_, &VariantRuns::finished, this, &LearnPage::variantsFinished);
  list_->setObjectName(QStringLiteral("lessons"));
  for (const Lesson& lesson : lessons()) list_->addItem(lesson.title);
  list_->setMaximumWidth(300);
  connect(list_, &QListWidget::currentRowChanged, this, &LearnPage::selectLesson);
  title_->setStyleSheet(QStringLiteral("font-size: 16pt; font-weight: bold"));
  text_->setObjectName(QStringLiteral("lessonText"));
  text_->setOpenExternalLinks(false);
  answer_label_->setObjectName(QStringLiteral("answer"));
  answer_label_->setWordWrap(true);
  answer_label_->setTextFormat(Qt::RichText);
  timeline_->setObjectName(QStringLiteral("lessonTimeline"));
  timeline_->setMinimumHeight(220);
  step_view_->setObjectName(QStringLiteral("stepView"));
  step_view_->setVisible(false);
  comparison_->setObjectName(QStringLiteral("lessonComparison"));
  comparison_->setVisible(false);

  auto* right = new QWidget(this);
  auto* column = new QVBoxLayout(right);
  column->addWidget(title_);
  column->addWidget(text_, 2);
  column->addWidget(buildQuestion());
  column->addWidget(answer_label_);
  column->addWidget(comparison_, 2);
  column->addWidget(buildReplay());
  column->addWidget(step_view_, 3);
  column->addWidget(timeline_, 3);
  auto* split = new QSplitter(this);
  split->addWidget(list_);
  split->addWidget(right);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);

  replay_timer_.setInterval(1000);
  connect(&replay_timer_, &QTimer::timeout, this, &LearnPage::stepReplay);
  list_->setCurrentRow(0);
}

QWidget* LearnPage::buildQuestion() {
  auto* row = new QWidget(this);
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  prediction_->setObjectName(QStringLiteral("prediction"));
  prediction_->setPlaceholderText(tr("your prediction"));
  prediction_->setValidator(new QDoubleValidator(0, 1e15, 3, prediction_));
  prediction_->setMaximumWidth(180);
  run_->setObjectName(QStringLiteral("runLesson"));
  run_->setEnabled(false);
  replay_last_->setObjectName(QStringLiteral("replayLast"));
  // Predict first: the run answers a question the learner has already answered.
  connect(prediction_, &QLineEdit::textChanged, this, &LearnPage::updateRunButton);
  ranking_->setObjectName(QStringLiteral("ranking"));
  ranking_->setToolTip(tr("Your ranking of the layouts, fastest step first"));
  connect(ranking_, &QComboBox::currentIndexChanged, this, &LearnPage::updateRunButton);
  connect(run_, &QPushButton::clicked, this, [this] { runLesson(); });
  connect(replay_last_, &QPushButton::clicked, this, &LearnPage::replayLastRun);
  layout->addWidget(question_);
  layout->addWidget(prediction_);
  layout->addWidget(unit_);
  layout->addWidget(ranking_);
  variant_->setObjectName(QStringLiteral("lessonVariant"));
  variant_->setToolTip(tr("The same job with another setting, to compare"));
  layout->addWidget(variant_);
  layout->addWidget(run_);
  layout->addWidget(replay_last_);
  layout->addStretch(1);
  return row;
}

QWidget* LearnPage::buildReplay() {
  auto* row = new QWidget(this);
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  play_->setObjectName(QStringLiteral("play"));
  play_->setCheckable(true);
  auto* step = new QPushButton(tr("Step"), row);
  step->setObjectName(QStringLiteral("stepReplay"));
  speed_->setObjectName(QStringLiteral("speed"));
  for (double steps_per_s : {0.5, 1.0, 2.0, 5.0})
    speed_->addItem(tr("%1 steps/s").arg(steps_per_s), steps_per_s);
  speed_->setCurrentIndex(1);
  connect(play_, &QPushButton::toggled, this, &LearnPage::setPlaying);
  connect(step, &QPushButton::clicked, this, &LearnPage::stepReplay);
  connect(speed_, &QComboBox::currentIndexChanged, this,
          [this] { replay_timer_.setInterval(int(1000 / speed_->currentData().toDouble())); });
  layout->addWidget(new QLabel(tr("Replay the run's records:"), row));
  layout->addWidget(play_);
  layout->addWidget(step);
  layout->addWidget(speed_);
  layout->addStretch(1);
  return row;
}

void LearnPage::selectLesson(int index) {
  if (index < 0 || index >= int(lessons().size()) || index == current_) return;
  current_ = index;
  if (list_->currentRow() != index) list_->setCurrentRow(index);
  const Lesson& lesson = lessons()[size_t(index)];
  title_->setText(lesson.title);
  text_->setHtml(lesson.text);
  question_->setText(lesson.question);
  unit_->setText(lesson.unit);
  prediction_->clear();
  variant_->clear();
  for (const LessonVariant& v : lesson.variants) variant_->addItem(v.label);
  variant_->setVisible(!lesson.variants.empty() && !lesson.ranks_variants);
  // A ranking lesson asks for an order of its variants, and runs them all.
  rankings_ = lesson.ranks_variants ? rankingsOf(int(lesson.variants.size()))
                                    : std::vector<std::vector<int>>{};
  ranking_->clear();
  ranking_->addItem(tr("— pick your ranking —"));
  for (const std::vector<int>& order : rankings_) ranking_->addItem(rankingText(lesson, order));
  ranking_->setVisible(lesson.ranks_variants);
  prediction_->setVisible(!lesson.ranks_variants);
  unit_->setVisible(!lesson.ranks_variants);
  updateRunButton();
  answer_.reset();
  answer_label_->setText(
      lesson.ranks_variants
          ? tr("<i>Pick your ranking, then run the lesson: each layout is simulated, then run "
               "(about half a minute on 2 cores); or replay its last runs.</i>")
          : tr("<i>Type your prediction, then run the lesson (a few seconds on "
               "2 cores), or replay its last run.</i>"));
  setPlaying(false);
  timeline_->setData(TimelineData{});
  step_view_->clear();
  step_view_->setVisible(false);
  comparison_->clear();
  comparison_->setVisible(false);
}

void LearnPage::selectVariant(int index) {
  if (index >= 0 && index < variant_->count()) variant_->setCurrentIndex(index);
}

void LearnPage::selectRanking(int index) {
  if (index >= 0 && index < ranking_->count()) ranking_->setCurrentIndex(index);
}

std::vector<int> LearnPage::chosenRanking() const {
  const int index = ranking_->currentIndex() - 1;
  return index >= 0 && index < int(rankings_.size()) ? rankings_[size_t(index)]
                                                     : std::vector<int>{};
}

bool LearnPage::runningVariants() const {
  return variant_runs_->isRunning();
}

void LearnPage::setDbPath(const QString& path) {
  db_path_ = path;
  variant_runs_->setDbPath(path);
}

// Predict first: the run answers a question the learner has already answered.
void LearnPage::updateRunButton() {
  const bool ranks = current_ >= 0 && lessons()[size_t(current_)].ranks_variants;
  run_->setEnabled(!waiting_ &&
                   (ranks ? ranking_->currentIndex() > 0 : prediction_->hasAcceptableInput()));
}

int LearnPage::currentVariant() const {
  return variant_->count() > 0 ? variant_->currentIndex() : -1;
}

QString LearnPage::stepViewHtml() const {
  return step_view_->isVisible() ? step_view_->toHtml() : QString();
}

QString LearnPage::comparisonHtml() const {
  return comparison_->isVisible() ? comparison_->toHtml() : QString();
}

QString LearnPage::presetPath(const Lesson& lesson) const {
  return QDir(presets_dir_).filePath(QStringLiteral("lessons/%1.toml").arg(lesson.id));
}

void LearnPage::runLesson(const QStringList& extra) {
  if (current_ < 0 || waiting_) return;
  const Lesson& lesson = lessons()[size_t(current_)];
  QStringList overrides;
  for (QString o : lesson.overrides)
    overrides << o.replace(QStringLiteral("{tmp}"), QDir::tempPath());
  if (const int v = variant_->currentIndex(); v >= 0 && v < int(lesson.variants.size()))
    overrides << lesson.variants[size_t(v)].overrides;
  overrides << extra;
  waiting_ = true;
  run_->setEnabled(false);
  answer_label_->setText(tr("<i>Running %1…</i>").arg(lesson.title));
  if (!lesson.ranks_variants) return emit runRequested(presetPath(lesson), overrides);
  // Every variant, simulated then run; `overrides` holds no variant's (none is chosen).
  overrides.clear();
  for (QString o : lesson.overrides)
    overrides << o.replace(QStringLiteral("{tmp}"), QDir::tempPath());
  overrides << extra;
  if (const QString error = variant_runs_->start(lesson, presetPath(lesson), overrides);
      !error.isEmpty())
    variantsFinished({}, error);
}

void LearnPage::variantsFinished(const QList<qint64>& runs, const QString& error) {
  waiting_ = false;
  updateRunButton();
  if (!error.isEmpty()) {
    answer_label_->setText(tr("The lesson stopped: %1").arg(error.toHtmlEscaped()));
  } else if (!runs.isEmpty()) {
    showRun(runs.last());
  }
  emit lessonFinished();
}

void LearnPage::runEnded(const RunOutcome& outcome) {
  if (!waiting_) return;
  if (variant_runs_->isRunning()) return variant_runs_->runEnded(outcome);
  waiting_ = false;
  updateRunButton();
  if (outcome.run_id <= 0) {
    answer_label_->setText(tr("The lesson's run did not start: %1")
                               .arg(QString::fromStdString(outcome.error).toHtmlEscaped()));
    return;
  }
  showRun(outcome.run_id);
}

// The store is read when asked, not on every lesson shown: no store I/O at start-up.
bool LearnPage::replayLastRun() {
  if (const int64_t id = lastLessonRun()) return showRun(id);
  answer_label_->setText(tr("No stored run of this lesson yet: run it first."));
  return false;
}

int64_t LearnPage::lastLessonRun() const {
  if (current_ < 0 || db_path_.isEmpty() || !QFile::exists(db_path_)) return 0;
  const std::string name = "lesson-" + lessons()[size_t(current_)].id.toStdString();
  try {
    RunStore store(db_path_.toStdString());
    for (const RunRow& run : store.listRuns())  // newest first
      if (run.name == name && run.status != "running" && originOf(run) != RunOrigin::kSimulated)
        return run.id;
  } catch (const std::exception&) {
  }
  return 0;
}

bool LearnPage::showRun(int64_t run_id) {
  if (current_ < 0) return false;
  try {
    RunStore store(db_path_.toStdString());  // a lesson's run is small: read it at once
    const auto run = store.run(run_id);
    if (!run) throw std::runtime_error("no run with id " + std::to_string(run_id));
    run_data_ = {*run, store.steps(run_id), store.events(run_id), store.serverLoads(run_id),
                 store.spans(run_id)};
    showComparison(store);
  } catch (const std::exception& e) {
    answer_label_->setText(tr("Cannot read run %1: %2").arg(run_id).arg(e.what()));
    return false;
  }
  const Lesson& lesson = lessons()[size_t(current_)];
  if (!lesson.variants.empty()) selectVariant(variantOf(lesson, run_data_));  // what it ran
  LessonAnswer answer = lesson.answer(run_data_);
  if (!answer.error.isEmpty()) {
    answer_label_->setText(
        tr("Run %1 cannot answer this lesson: %2").arg(run_id).arg(answer.error.toHtmlEscaped()));
    return false;
  }
  last_step_ = 0;
  for (const StepRow& s : run_data_.steps) last_step_ = std::max(last_step_, s.step);
  replay_first_ = answer.focus_step;
  replay_steps_ = std::max(1, answer.focus_steps);
  showAnswer(answer);
  drawReplay();
  return true;
}

void LearnPage::showComparison(RunStore& store) {
  constexpr size_t kLessonRunsCompared = 8;
  const Lesson& lesson = lessons()[size_t(current_)];
  const std::string name = "lesson-" + lesson.id.toStdString();
  // A ranking lesson sets each variant's newest simulated and real runs side by side.
  const size_t wanted = lesson.ranks_variants ? 4 * lesson.variants.size() : kLessonRunsCompared;
  std::vector<LessonRun> runs;
  for (const RunRow& run : store.listRuns()) {  // newest first
    if (run.status == "running") continue;
    // `ranklab simulate` names its run "<job's name> (simulated)".
    const bool simulated = originOf(run) == RunOrigin::kSimulated && lesson.ranks_variants &&
                           run.name == name + " (simulated)";
    if (run.name != name && !simulated) continue;
    if (run.id == run_data_.run.id) {
      runs.push_back(run_data_);  // the run shown, read just before
    } else {
      runs.push_back({run, store.steps(run.id), store.events(run.id), store.serverLoads(run.id),
                      store.spans(run.id)});
    }
    if (runs.size() == wanted) break;
  }
  QString html;
  if (lesson.ranks_variants) {
    html = layoutRankingHtml(rankVariants(lesson, runs, chosenRanking()));
  } else {
    std::vector<ComparedLessonRun> compared;
    for (const LessonRun& run : runs) compared.push_back({&run, lesson.answer(run)});
    html = lessonComparisonHtml(lesson, compared);
  }
  comparison_->setHtml(html);
  comparison_->setVisible(!html.isEmpty());
}

void LearnPage::showAnswer(const LessonAnswer& answer) {
  answer_ = answer;
  const Lesson& lesson = lessons()[size_t(current_)];
  if (lesson.ranks_variants) {  // the ranking is the answer: the table beside this one run
    const std::vector<int> order = chosenRanking();
    answer_label_->setText(
        tr("<p>%1Replayed below: run %2 (%3), its step measured <b>%L4 ms</b> (%5).</p>")
            .arg(order.empty()
                     ? QString()
                     : tr("You ranked <b>%1</b>. ").arg(rankingText(lesson, order).toHtmlEscaped()))
            .arg(run_data_.run.id)
            .arg(lesson.variants[size_t(variantOf(lesson, run_data_))].label.toHtmlEscaped())
            .arg(answer.measured, 0, 'f', 2)
            .arg(answer.formula > 0 ? tr("predicted %L1 ms by %2")
                                          .arg(answer.formula, 0, 'f', 2)
                                          .arg(answer.formula_text.toHtmlEscaped())
                                    : answer.formula_text.toHtmlEscaped()));
    return;
  }
  QString verdict;
  bool predicted = false;
  const double guess = prediction_->locale().toDouble(prediction_->text(), &predicted);
  if (predicted && answer.measured != 0)
    verdict = tr("You predicted <b>%1</b>: %2 % off the measured value. ")
                  .arg(number(guess))
                  .arg(100.0 * std::abs(guess - answer.measured) / answer.measured, 0, 'f', 1);
  answer_label_->setText(
      tr("<p>%1Measured in run %2: <b>%3 %4</b>. Formula: %5 → <b>%6</b> (measured/formula "
         "= %7).</p>%8")
          .arg(verdict)
          .arg(run_data_.run.id)
          .arg(number(answer.measured), unit_->text(), answer.formula_text.toHtmlEscaped(),
               number(answer.formula))
          .arg(answer.formula != 0 ? answer.measured / answer.formula : 0.0, 0, 'f', 5)
          .arg(answer.detail));
}

void LearnPage::drawReplay() {
  const int64_t last = replay_first_ + replay_steps_ - 1;
  std::vector<StepRow> window;
  for (const StepRow& s : run_data_.steps)
    if (s.step >= replay_first_ && s.step <= last) window.push_back(s);
  std::vector<EventRow> marks;
  for (const EventRow& e : run_data_.events)
    if (isTimelineMark(e) && e.step >= replay_first_ && e.step <= last) marks.push_back(e);
  std::vector<SpanRow> spans;  // the window's passes and ring hops (the lessons are not the
                               // device's: its pieces stay on the Timeline page)
  for (const SpanRow& s : run_data_.spans)
    if (s.step >= replay_first_ && s.step <= last && !isDeviceSpan(s)) spans.push_back(s);
  timeline_->setData(buildTimeline(run_data_.run.id, window, true, spans, marks));
  const Lesson& lesson = lessons()[size_t(current_)];
  const QString view = lesson.step_view ? lesson.step_view(run_data_, replay_first_) : QString();
  step_view_->setHtml(view);
  step_view_->setVisible(!view.isEmpty());
}

void LearnPage::stepReplay() {
  if (run_data_.steps.empty()) return setPlaying(false);
  if (replay_first_ + replay_steps_ - 1 >= last_step_) return setPlaying(false);
  ++replay_first_;
  drawReplay();
}

void LearnPage::setPlaying(bool on) {
  if (play_->isChecked() != on) play_->setChecked(on);  // comes back here through toggled
  play_->setText(on ? tr("Pause") : tr("Play"));
  if (on)
    replay_timer_.start();
  else
    replay_timer_.stop();
}

}  // namespace ranklab
