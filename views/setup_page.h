// The job setup page: a form over every key of the job schema (built from jobKeys(), so new
// keys appear on their own) showing the keys that apply to the job as chosen, each with its
// docs/job-file.md row as tooltip, checked as you type by checkJob; the field in error is marked
// and says why; Launch stays disabled until the job is valid. Presets, open/save, recent
// jobs, and the exact mpirun command the launch will run.
#pragma once

#include <QMap>
#include <QWidget>
#include <vector>

#include "launch/job_runner.h"
#include "views/models/job_draft.h"

class QCheckBox;
class QComboBox;
class QGroupBox;
class QVBoxLayout;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QToolButton;

namespace ranklab {

class SetupPage : public QWidget {
  Q_OBJECT

 public:
  SetupPage(LaunchOptions launch, QString presets_dir, QWidget* parent = nullptr);

  bool loadFile(const QString& path);  // false (and a message) when it cannot be read
  bool saveFile(const QString& path);
  void setRunning(bool running);  // Launch is disabled while a run is going
  void setValue(const QString& path, const QString& form_text);  // as if typed

  // The editor of a key ("train.lr"): a QLineEdit, QComboBox or QCheckBox.
  QWidget* editorFor(const QString& path) const { return fields_.value(path).editor; }
  QString errorTextFor(const QString& path) const;  // "" when the value is valid
  // Whether the form shows the key: it applies to the job (keyApplies), is in error, or
  // "Show every key" is on.
  bool isShown(const QString& path) const;
  QCheckBox* showAllBox() const { return show_all_; }
  QPushButton* launchButton() const { return launch_; }
  QString commandText() const;
  const JobDraft& draft() const { return draft_; }
  QString filePath() const { return file_path_; }

 signals:
  void launchRequested(const QString& toml_text, const QString& job_path);
  void message(const QString& text);  // for the status bar

 private:
  struct FieldWidgets {
    QWidget* editor = nullptr;
    QLabel* error = nullptr;
    QLabel* label = nullptr;
    QLabel* hint = nullptr;
    QWidget* section = nullptr;  // the group box of the key's section
  };
  QWidget* buildForm();
  QWidget* buildFileBar();
  QWidget* editorFor(const JobKey& key);
  void setFormValue(const JobKey& key, const QString& text);
  void fillFromDraft();
  // The editors of the keys the draft changed by itself when `edited` changed (data.path
  // following data.dataset), shown with their new values.
  void showFollowedValues(const JobValues& before, const std::string& edited);
  void onEdited(const QString& path, const QString& text);
  void showIssues();
  void showApplicableKeys();
  void balanceColumns();
  void updateCommand();
  void updateRecentMenu();
  void openDialog();
  void saveAsDialog();

  LaunchOptions launch_options_;
  QString presets_dir_;
  JobDraft draft_;
  QString file_path_;
  bool running_ = false;
  bool filling_ = false;  // programmatic edits do not re-enter onEdited
  QMap<QString, FieldWidgets> fields_;
  QComboBox* presets_ = nullptr;
  QToolButton* recent_ = nullptr;
  QLabel* file_label_ = nullptr;
  QLabel* verdict_ = nullptr;
  QLabel* other_issues_ = nullptr;
  QPlainTextEdit* command_ = nullptr;
  QPushButton* launch_ = nullptr;
  QCheckBox* show_all_ = nullptr;
  QLabel* hidden_count_ = nullptr;
  QVBoxLayout* columns_[2] = {nullptr, nullptr};
  std::vector<QGroupBox*> sections_;  // in schema order
};

}  // namespace ranklab
