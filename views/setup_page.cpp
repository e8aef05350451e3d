#include "views/setup_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include "engine/job/job_file.h"
#include "engine/job/job_key_docs.h"
#include "engine/job/job_key_relevance.h"
#include "launch/slurm_job.h"
#include "views/models/workbench_settings.h"

namespace ranklab {

namespace {

const char* kErrorStyle = "border: 2px solid #c62828; border-radius: 3px; background: #fff3f3;";

QString issueText(const std::vector<JobIssue>& issues) {
  QStringList lines;
  for (const JobIssue& issue : issues) lines << QString::fromStdString(issue.message);
  return lines.join(QLatin1Char('\n'));
}

// The key's row of docs/job-file.md: type, default and what it does.
QString toolTipFor(const JobKey& key) {
  const auto& docs = jobKeyDocs();
  const auto it = docs.find(key.path);
  const QString path = QString::fromStdString(key.path).toHtmlEscaped();
  if (it == docs.end())  // a key without docs also fails JobKeyDocs.EveryKeyIsDocumented
    return QStringLiteral("<b>%1</b> (default %2): %3")
        .arg(path, QString::fromStdString(key.default_value).toHtmlEscaped(),
             QString::fromStdString(key.allowed).toHtmlEscaped());
  const JobKeyDoc& doc = it->second;
  return QStringLiteral("<p style='white-space:pre-wrap'><b>%1</b> — %2, default %3</p><p>%4</p>")
      .arg(path, QString::fromStdString(doc.type).toHtmlEscaped(),
           QString::fromStdString(doc.default_value.empty() ? "\"\"" : doc.default_value)
               .toHtmlEscaped(),
           QString::fromStdString(doc.text).toHtmlEscaped());
}

QString sectionTitle(const JobKey& key) {
  const QString purpose = QString::fromStdString(key.section_purpose);
  if (key.section.empty()) return QObject::tr("job — %1").arg(purpose);
  return QStringLiteral("[%1] — %2").arg(QString::fromStdString(key.section), purpose);
}

}  // namespace

SetupPage::SetupPage(LaunchOptions launch, QString presets_dir, QWidget* parent)
    : QWidget(parent), launch_options_(std::move(launch)), presets_dir_(std::move(presets_dir)) {
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(buildForm());
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);

  verdict_ = new QLabel(this);
  verdict_->setObjectName(QStringLiteral("jobVerdict"));
  QFont big = verdict_->font();
  big.setPointSize(11);
  big.setBold(true);
  verdict_->setFont(big);
  other_issues_ = new QLabel(this);
  other_issues_->setObjectName(QStringLiteral("otherIssues"));
  other_issues_->setWordWrap(true);
  other_issues_->setStyleSheet(QStringLiteral("color: #b31b1b;"));
  other_issues_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  launch_ = new QPushButton(style()->standardIcon(QStyle::SP_MediaPlay), tr("Launch"), this);
  launch_->setObjectName(QStringLiteral("setupLaunch"));
  launch_->setMinimumWidth(140);
  launch_->setFont(big);
  connect(launch_, &QPushButton::clicked, this, [this] {
    if (draft_.valid() && !running_)
      emit launchRequested(QString::fromStdString(draft_.tomlText()), file_path_);
  });

  command_ = new QPlainTextEdit(this);
  command_->setObjectName(QStringLiteral("mpirunCommand"));
  command_->setReadOnly(true);
  command_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  command_->setMaximumHeight(64);
  command_->setLineWrapMode(QPlainTextEdit::WidgetWidth);

  auto* verdict_row = new QHBoxLayout;
  verdict_row->addWidget(verdict_, 1);
  verdict_row->addWidget(launch_);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(buildFileBar());
  layout->addWidget(scroll, 1);
  layout->addLayout(verdict_row);
  layout->addWidget(other_issues_);
  layout->addWidget(new QLabel(tr("Launch runs exactly this command:"), this));
  layout->addWidget(command_);

  fillFromDraft();
}

QWidget* SetupPage::buildFileBar() {
  auto* bar = new QWidget(this);
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);

  presets_ = new QComboBox(bar);
  presets_->setObjectName(QStringLiteral("presets"));
  presets_->addItem(tr("Preset…"));
  const QDir dir(presets_dir_);
  for (const QFileInfo& f : dir.entryInfoList({QStringLiteral("*.toml")}, QDir::Files, QDir::Name))
    presets_->addItem(f.completeBaseName(), f.absoluteFilePath());
  connect(presets_, &QComboBox::activated, this, [this](int index) {
    if (index > 0) loadFile(presets_->itemData(index).toString());
    presets_->setCurrentIndex(0);
  });

  auto* open =
      new QPushButton(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("Open…"), bar);
  connect(open, &QPushButton::clicked, this, &SetupPage::openDialog);
  auto* save = new QPushButton(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("Save"), bar);
  connect(save, &QPushButton::clicked, this, [this] {
    if (file_path_.isEmpty())
      saveAsDialog();
    else
      saveFile(file_path_);
  });
  auto* save_as = new QPushButton(tr("Save as…"), bar);
  connect(save_as, &QPushButton::clicked, this, &SetupPage::saveAsDialog);
  recent_ = new QToolButton(bar);
  recent_->setText(tr("Recent"));
  recent_->setPopupMode(QToolButton::InstantPopup);
  recent_->setMenu(new QMenu(recent_));
  connect(recent_->menu(), &QMenu::aboutToShow, this, &SetupPage::updateRecentMenu);

  file_label_ = new QLabel(bar);
  file_label_->setObjectName(QStringLiteral("jobFile"));
  file_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  for (QWidget* w :
       {static_cast<QWidget*>(presets_), static_cast<QWidget*>(open), static_cast<QWidget*>(save),
        static_cast<QWidget*>(save_as), static_cast<QWidget*>(recent_)})
    row->addWidget(w);
  row->addSpacing(12);
  row->addWidget(file_label_, 1);

  hidden_count_ = new QLabel(bar);
  hidden_count_->setObjectName(QStringLiteral("hiddenKeys"));
  hidden_count_->setStyleSheet(QStringLiteral("color: #666;"));
  show_all_ = new QCheckBox(tr("Show every key"), bar);
  show_all_->setObjectName(QStringLiteral("showAllKeys"));
  show_all_->setToolTip(
      tr("Also show the keys that change nothing for this job (another "
         "dataset's, optimizer's, strategy's or codec's)."));
  connect(show_all_, &QCheckBox::toggled, this, &SetupPage::showApplicableKeys);
  row->addWidget(hidden_count_);
  row->addWidget(show_all_);
  return bar;
}

QWidget* SetupPage::buildForm() {
  auto* form = new QWidget(this);
  auto* columns = new QHBoxLayout(form);
  for (QVBoxLayout*& column : columns_) {
    column = new QVBoxLayout;
    columns->addLayout(column, 1);
  }
  QGridLayout* grid = nullptr;
  QGroupBox* box = nullptr;
  std::string section = "\x01";
  int row = 0;
  for (const JobKey& key : jobKeys()) {
    if (key.section != section) {
      section = key.section;
      box = new QGroupBox(sectionTitle(key), form);
      grid = new QGridLayout(box);
      grid->setColumnStretch(1, 1);
      sections_.push_back(box);
      row = 0;
    }

    const QString path = QString::fromStdString(key.path);
    auto* label = new QLabel(QString::fromStdString(key.key), form);
    QWidget* editor = editorFor(key);
    label->setToolTip(editor->toolTip());
    auto* hint = new QLabel(QString::fromStdString(key.allowed), form);
    hint->setStyleSheet(QStringLiteral("color: #666;"));
    hint->setWordWrap(true);
    auto* error = new QLabel(form);
    error->setObjectName(QStringLiteral("error:") + path);
    error->setStyleSheet(QStringLiteral("color: #b31b1b;"));
    error->setWordWrap(true);
    error->hide();
    grid->addWidget(label, row, 0);
    grid->addWidget(editor, row, 1);
    grid->addWidget(hint, row, 2);
    grid->addWidget(error, row + 1, 1, 1, 2);
    row += 2;
    hint->setToolTip(editor->toolTip());
    fields_.insert(path, {editor, error, label, hint, box});
  }
  balanceColumns();
  return form;
}

// Sections go to the shorter column, counting the rows shown, so both end at about the same
// height whatever keys are hidden.
void SetupPage::balanceColumns() {
  for (QVBoxLayout* column : columns_)
    while (QLayoutItem* item = column->takeAt(0)) delete item;  // the widgets stay
  int height[2] = {0, 0};
  for (QGroupBox* box : sections_) {
    int rows = 0;
    for (const FieldWidgets& field : fields_)
      rows += field.section == box && !field.editor->isHidden() ? 1 : 0;
    const int side = height[0] <= height[1] ? 0 : 1;
    columns_[side]->addWidget(box);
    if (!box->isHidden()) height[side] += 2 + rows;  // the box's title and margins, its rows
  }
  for (QVBoxLayout* column : columns_) column->addStretch(1);
}

QWidget* SetupPage::editorFor(const JobKey& key) {
  const QString path = QString::fromStdString(key.path);
  QWidget* editor = nullptr;
  if (key.kind == JobValueKind::Choice) {
    auto* combo = new QComboBox(this);
    for (const std::string& choice : key.choices) combo->addItem(QString::fromStdString(choice));
    connect(combo, &QComboBox::currentTextChanged, this,
            [this, path](const QString& text) { onEdited(path, text); });
    editor = combo;
  } else if (key.kind == JobValueKind::Boolean) {
    auto* box = new QCheckBox(this);
    connect(box, &QCheckBox::toggled, this, [this, path](bool on) {
      onEdited(path, on ? QStringLiteral("true") : QStringLiteral("false"));
    });
    editor = box;
  } else {
    auto* edit = new QLineEdit(this);
    edit->setPlaceholderText(QString::fromStdString(key.default_value));
    connect(edit, &QLineEdit::textEdited, this,
            [this, path](const QString& text) { onEdited(path, text); });
    editor = edit;
  }
  editor->setObjectName(QStringLiteral("field:") + path);
  editor->setToolTip(toolTipFor(key));
  return editor;
}

void SetupPage::setFormValue(const JobKey& key, const QString& text) {
  QWidget* editor = fields_.value(QString::fromStdString(key.path)).editor;
  if (auto* combo = qobject_cast<QComboBox*>(editor)) {
    if (combo->findText(text) < 0) combo->addItem(text);  // a value the schema refuses: shown
    combo->setCurrentText(text);
  } else if (auto* box = qobject_cast<QCheckBox*>(editor)) {
    box->setChecked(text == QLatin1String("true"));
  } else if (auto* edit = qobject_cast<QLineEdit*>(editor)) {
    edit->setText(text);
  }
}

void SetupPage::fillFromDraft() {
  filling_ = true;
  for (const JobKey& key : jobKeys())
    setFormValue(key, QString::fromStdString(draft_.value(key.path)));
  filling_ = false;
  file_label_->setText(file_path_.isEmpty() ? tr("unsaved job")
                                            : QDir::toNativeSeparators(file_path_));
  showIssues();
}

void SetupPage::onEdited(const QString& path, const QString& text) {
  if (filling_) return;
  const JobValues before = draft_.values();
  draft_.setValue(path.toStdString(), text.toStdString());
  showFollowedValues(before, path.toStdString());
  showIssues();
}

void SetupPage::showFollowedValues(const JobValues& before, const std::string& edited) {
  filling_ = true;
  for (const JobKey& key : jobKeys())
    if (key.path != edited && draft_.value(key.path) != before.at(key.path))
      setFormValue(key, QString::fromStdString(draft_.value(key.path)));
  filling_ = false;
}

void SetupPage::setValue(const QString& path, const QString& form_text) {
  const JobKey* key = findJobKey(path.toStdString());
  if (!key) return;
  const JobValues before = draft_.values();
  draft_.setValue(key->path, form_text.toStdString());
  filling_ = true;
  setFormValue(*key, form_text);
  filling_ = false;
  showFollowedValues(before, key->path);
  showIssues();
}

QString SetupPage::errorTextFor(const QString& path) const {
  return issueText(draft_.issuesFor(path.toStdString()));
}

void SetupPage::showIssues() {
  for (auto it = fields_.begin(); it != fields_.end(); ++it) {
    const QString text = errorTextFor(it.key());
    it->error->setText(text);
    it->error->setVisible(!text.isEmpty());
    it->editor->setStyleSheet(text.isEmpty() ? QString() : QString::fromLatin1(kErrorStyle));
  }
  QStringList other;
  for (const JobIssue& issue : draft_.otherIssues()) other << QString::fromStdString(issue.str());
  for (const JobIssue& issue : draft_.fileIssues())
    other << tr("not kept from the file: %1").arg(QString::fromStdString(issue.str()));
  other_issues_->setText(other.join(QLatin1Char('\n')));
  other_issues_->setVisible(!other.isEmpty());

  const size_t n = draft_.issues().size();
  if (n == 0) {
    verdict_->setText(tr("✔ The job is valid."));
    verdict_->setStyleSheet(QStringLiteral("color: #1b7a3a;"));
  } else {
    verdict_->setText(n == 1 ? tr("✘ 1 problem: fix the marked field to launch.")
                             : tr("✘ %1 problems: fix the marked fields to launch.").arg(n));
    verdict_->setStyleSheet(QStringLiteral("color: #b31b1b;"));
  }
  launch_->setEnabled(n == 0 && !running_);
  showApplicableKeys();
  updateCommand();
}

bool SetupPage::isShown(const QString& path) const {
  return (show_all_ && show_all_->isChecked()) || keyApplies(path.toStdString(), draft_.values()) ||
         !errorTextFor(path).isEmpty();
}

void SetupPage::showApplicableKeys() {
  QMap<QWidget*, bool> section_shown;
  int hidden = 0;
  for (auto it = fields_.begin(); it != fields_.end(); ++it) {
    const bool shown = isShown(it.key());
    hidden += shown ? 0 : 1;
    for (QWidget* w :
         {static_cast<QWidget*>(it->label), it->editor, static_cast<QWidget*>(it->hint)})
      w->setVisible(shown);
    if (!shown) it->error->hide();
    section_shown[it->section] = section_shown.value(it->section) || shown;
  }
  for (auto it = section_shown.begin(); it != section_shown.end(); ++it)
    it.key()->setVisible(it.value());
  balanceColumns();
  hidden_count_->setText(hidden == 0 ? QString()
                                     : tr("%n key(s) that do not apply are hidden", "", hidden));
}

void SetupPage::updateCommand() {
  const auto job = draft_.job();
  if (!job) {
    command_->setPlainText(tr("(the command appears when the job is valid)"));
    return;
  }
  const JobRunner runner(launch_options_);
  QStringList words;
  // Hosts get this machine's address on their route, found at launch (no lookups per key).
  const std::string endpoint =
      runsOnHosts(*job) ? "tcp://<this machine's address>:<port>" : "tcp://127.0.0.1:<port>";
  // Under Slurm the command is its batch script's, submitted by sbatch.
  std::vector<std::string> shown =
      runsUnderSlurm(*job) ? shownSubmission(job->launch, processCount(*job), "ranklab-<run-id>",
                                             "<the store's folder>/slurm/ranklab-<run-id>-")
                           : std::vector<std::string>{};
  for (const std::string& w :
       shownCommand(runner.command(*job, "<resolved-job.toml>", "<run-id>", endpoint)))
    shown.push_back(w);
  for (const std::string& w : shown) words << QString::fromStdString(w);
  command_->setPlainText(words.join(QLatin1Char(' ')));
}

QString SetupPage::commandText() const {
  return command_->toPlainText();
}

void SetupPage::setRunning(bool running) {
  running_ = running;
  launch_->setEnabled(draft_.valid() && !running_);
}

bool SetupPage::loadFile(const QString& path) {
  // Bounded and never blocking: --job /dev/zero or a FIFO is refused, naming the file.
  std::string text;
  try {
    text = readJobFile(QFile::encodeName(path).toStdString());
  } catch (const JobError& e) {
    emit message(QString::fromStdString(e.what()));
    return false;
  }
  file_path_ = QFileInfo(path).absoluteFilePath();
  draft_.loadText(text, file_path_.toStdString());
  WorkbenchSettings::addRecentJob(file_path_);
  fillFromDraft();
  emit message(tr("Job %1 loaded").arg(file_path_));
  return true;
}

bool SetupPage::saveFile(const QString& path) {
  QSaveFile file(path);
  const QByteArray text = QByteArray::fromStdString(draft_.tomlText());
  if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size() || !file.commit()) {
    emit message(tr("%1: cannot save the job file: %2").arg(path, file.errorString()));
    return false;
  }
  file_path_ = QFileInfo(path).absoluteFilePath();
  draft_.setFileName(file_path_.toStdString());
  WorkbenchSettings::addRecentJob(file_path_);
  fillFromDraft();
  emit message(tr("Job saved to %1").arg(file_path_));
  return true;
}

void SetupPage::openDialog() {
  const QString start = file_path_.isEmpty() ? presets_dir_ : QFileInfo(file_path_).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open job"), start,
                                                    tr("Job files (*.toml);;All files (*)"));
  if (!path.isEmpty()) loadFile(path);
}

void SetupPage::saveAsDialog() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save job"), file_path_, tr("Job files (*.toml)"));
  if (!path.isEmpty()) saveFile(path);
}

void SetupPage::updateRecentMenu() {
  QMenu* menu = recent_->menu();
  menu->clear();
  const QStringList recent = WorkbenchSettings::recentJobs();
  if (recent.isEmpty()) menu->addAction(tr("(no recent jobs)"))->setEnabled(false);
  for (const QString& path : recent)
    menu->addAction(QDir::toNativeSeparators(path), this, [this, path] { loadFile(path); });
}

}  // namespace ranklab
