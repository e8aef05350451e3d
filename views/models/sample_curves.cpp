// A rank's samples and the curves drawn from them (declared in run_series.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "views/models/halving_samples.h"
#include "views/models/run_series.h"

namespace ranklab {

double sampleValue(const Sample& s, Metric metric) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (metric) {
    case Metric::Loss:
      return s.loss_count ? s.loss_sum / double(s.loss_count) : nan;
    case Metric::SentMBps:
      return s.span_s > 0 ? s.tx_bytes / s.span_s / 1e6 : nan;
    case Metric::ReceivedMBps:
      return s.span_s > 0 ? s.rx_bytes / s.span_s / 1e6 : nan;
    case Metric::LossScale:
      return s.loss_scale;
    case Metric::Staleness:
      return s.count ? s.staleness_sum / double(s.count) : nan;
    case Metric::GradNorm:
      return s.count ? s.grad_norm_sum / double(s.count) : nan;
    case Metric::LearningRate:
      return s.count ? s.lr_sum / double(s.count) : nan;
    case Metric::StepMs:
      return s.count ? s.span_s / double(s.count) * 1e3 : nan;
    case Metric::WaitMs:
      return s.count ? s.wait_s / double(s.count) * 1e3 : nan;
    case Metric::BusyMs:
      return s.count ? (s.span_s - s.wait_s) / double(s.count) * 1e3 : nan;
  }
  return nan;
}

void Sample::merge(const Sample& later) {
  step = later.step;
  time_s = later.time_s;
  sent_mb = later.sent_mb;
  loss_sum += later.loss_sum;
  loss_count += later.loss_count;
  loss_min = std::min(loss_min, later.loss_min);
  loss_max = std::max(loss_max, later.loss_max);
  loss_scale = std::min(loss_scale, later.loss_scale);
  staleness_sum += later.staleness_sum;
  grad_norm_sum += later.grad_norm_sum;
  lr_sum += later.lr_sum;
  tx_bytes += later.tx_bytes;
  rx_bytes += later.rx_bytes;
  span_s += later.span_s;
  wait_s += later.wait_s;
  count += later.count;
}

void SampleSeries::append(const Sample& sample) {
  appendHalving(samples_, unit_, keep_, sample);
}

int64_t SampleSeries::dropAfter(int64_t step) {
  int64_t dropped = 0;
  while (!samples_.empty() && samples_.back().step > double(step)) {
    dropped += samples_.back().count;
    samples_.pop_back();
  }
  return dropped;
}

QList<QPointF> curvePoints(const SampleSeries& series, Metric metric, XAxis x, double smoothing,
                           int max_points) {
  const std::vector<Sample>& all = series.samples();
  const double w = std::clamp(smoothing, 0.0, 0.999);
  const bool envelope = metric == Metric::Loss && w == 0;  // two points per sample
  const size_t budget = size_t(std::max(1, envelope ? max_points / 2 : max_points));
  const size_t group = std::max<size_t>(1, (all.size() + budget - 1) / budget);
  QList<QPointF> points;
  points.reserve(qsizetype(all.size() / group + 1) * (envelope ? 2 : 1));
  double ema = 0, weight = 1;  // weight = w^n, for the debiasing
  for (size_t i = 0; i < all.size(); i += group) {
    Sample s = all[i];
    for (size_t j = i + 1; j < std::min(all.size(), i + group); ++j) s.merge(all[j]);
    const double v = sampleValue(s, metric);
    if (!std::isfinite(v)) continue;
    if (envelope && s.loss_count > 1 && s.loss_min < s.loss_max) {
      points.append(QPointF(sampleX(s, x), s.loss_min));
      points.append(QPointF(sampleX(s, x), s.loss_max));
      continue;
    }
    ema = w * ema + (1 - w) * v;
    weight *= w;
    // Debiased: early points are not pulled towards the zero the average starts from.
    points.append(QPointF(sampleX(s, x), w > 0 ? ema / (1 - weight) : v));
  }
  return points;
}

}  // namespace ranklab
