#include "views/load_progress.h"

namespace ranklab {

LoadProgress::LoadProgress(QWidget* parent) : QProgressBar(parent) {
  setMaximumWidth(220);
  setTextVisible(true);
  hide();
  delay_.setSingleShot(true);
  delay_.setInterval(kDelayMs);
  connect(&delay_, &QTimer::timeout, this, [this] { setVisible(loading_); });
}

void LoadProgress::start() {
  loading_ = true;
  setRange(0, 0);  // busy until a stage is told
  setFormat(tr("loading…"));
  if (!isVisible()) delay_.start();
}

void LoadProgress::setStage(int done, int of, const QString& text) {
  setRange(0, of);
  setValue(done);
  setFormat(text);
}

void LoadProgress::finish() {
  loading_ = false;
  delay_.stop();
  hide();
}

}  // namespace ranklab
