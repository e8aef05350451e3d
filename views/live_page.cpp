#include "views/live_page.h"

#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include "views/loss_chart.h"
#include "views/models/live_run_model.h"
#include "views/time_breakdown_chart.h"

namespace ranklab {

LivePage::LivePage(QWidget* parent)
    : QWidget(parent),
      status_(new QLabel(this)),
      loss_(new LossChart(this)),
      time_(new TimeBreakdownChart(this)) {
  status_->setObjectName(QStringLiteral("runStatus"));
  status_->setTextFormat(Qt::RichText);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setWordWrap(true);  // a long line must wrap, not widen the window
  status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  QFont font = status_->font();
  font.setPointSize(11);
  status_->setFont(font);
  status_->setContentsMargins(6, 4, 6, 4);

  auto* charts = new QSplitter(Qt::Vertical, this);
  charts->addWidget(loss_);
  charts->addWidget(time_);
  charts->setStretchFactor(0, 3);
  charts->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(status_);
  layout->addWidget(charts, 1);

  redraw_timer_.setSingleShot(true);
  redraw_timer_.setInterval(kRedrawIntervalMs);
  connect(&redraw_timer_, &QTimer::timeout, this, &LivePage::refreshNow);
  updateStatus();
}

void LivePage::setModel(LiveRunModel* model) {
  if (model_ == model) return;
  disconnect(updated_connection_);
  disconnect(reset_connection_);
  model_ = model;
  loss_->clear();
  time_->clear();
  if (model_) {
    updated_connection_ = connect(model_, &LiveRunModel::updated, this, &LivePage::scheduleRedraw);
    reset_connection_ = connect(model_, &LiveRunModel::modelReset, this, [this] {
      loss_->clear();
      time_->clear();
    });
  }
  refreshNow();
}

void LivePage::setHeadline(const QString& headline) {
  headline_ = headline;
  updateStatus();
}

void LivePage::scheduleRedraw() {
  // Coalesce: the first change starts the clock, the rest ride along.
  if (!redraw_timer_.isActive()) redraw_timer_.start();
}

void LivePage::refreshNow() {
  redraw_timer_.stop();
  if (model_) {
    loss_->refresh(*model_);
    time_->refresh(*model_);
  }
  updateStatus();
}

QString LivePage::statusText() const {
  return status_plain_;
}

void LivePage::updateStatus() {
  QStringList parts;  // plain text, one fact each
  if (model_ && model_->latestStep() >= 0) {
    parts << tr("epoch %1").arg(model_->latestEpoch());
    parts << tr("step %1").arg(model_->latestStep());
    parts << tr("loss %1").arg(model_->latestLoss(), 0, 'f', 4);
    parts << tr("%1 samples/s").arg(model_->samplesPerSecond(), 0, 'f', 0);
  }
  if (model_ && model_->latestEval())
    parts << tr("test accuracy %1 %").arg(model_->latestEval()->test_accuracy * 100.0, 0, 'f', 1);
  if (headline_.isEmpty() && parts.isEmpty())
    parts << tr("No run selected. Launch a job or pick a run on the left.");

  QStringList html;
  if (!headline_.isEmpty()) html << QStringLiteral("<b>%1</b>").arg(headline_.toHtmlEscaped());
  // Wrap between the facts, never inside one ("loss" apart from its value).
  for (const QString& part : parts)
    html << part.toHtmlEscaped().replace(QLatin1Char(' '), QStringLiteral("&nbsp;"));
  status_->setText(html.join(QStringLiteral(" &nbsp;·&nbsp; ")));

  if (!headline_.isEmpty()) parts.prepend(headline_);
  status_plain_ = parts.join(QStringLiteral(" · "));
}

}  // namespace ranklab
