#include "views/models/run_series.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace ranklab {

namespace {

constexpr double kNsPerS = 1e9;
constexpr double kRateWindowS = 5.0;
// A steps deque this long means a rank stopped reporting: stop waiting for it.
constexpr size_t kMaxPendingSteps = 4096;

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double computeNs(const PhaseTimes& t) {
  return double(phaseSum(t, PhaseKind::kCompute));
}

// A rank's values of the spread metrics over one sample.
std::array<float, kSpreadMetrics> spreadValues(const Sample& s) {
  return {float(sampleValue(s, Metric::Loss)), float(sampleValue(s, Metric::StepMs)),
          float(sampleValue(s, Metric::WaitMs)), float(sampleValue(s, Metric::SentMBps))};
}

}  // namespace

const char* phaseName(int phase) {
  return phase >= 0 && phase < kPhaseCount ? kStepPhaseNames[size_t(phase)] : "?";
}

std::string lastPhaseOf(const RankSeries& rank) {
  if (rank.recent_steps.empty()) return rank.step < 0 ? "starting" : "?";
  const PhaseTimes& last = rank.recent_steps.back();
  for (int p = kPhaseCount - 1; p >= 0; --p)
    if (last[size_t(p)] > 0) return phaseName(p);
  return phaseName(kPhaseCount - 1);
}

const char* stateName(RankState state) {
  switch (state) {
    case RankState::Starting:
      return "starting";
    case RankState::Running:
      return "running";
    case RankState::Waiting:
      return "waiting";
    case RankState::Straggling:
      return "straggling";
    case RankState::Silent:
      return "silent";
    case RankState::Failed:
      return "failed";
    case RankState::Done:
      return "done";
  }
  return "?";
}

PhaseTimes phaseTimes(const StepRow& s) {
  return s.phases();
}

double RankSeries::computeSeconds() const {
  return computeNs(total) / kNsPerS;
}

int RunSeries::rowOfRank(int rank) const {
  auto it = std::lower_bound(ranks_.begin(), ranks_.end(), rank,
                             [](const RankSeries& r, int value) { return r.rank < value; });
  return it != ranks_.end() && it->rank == rank ? int(it - ranks_.begin()) : -1;
}

RankSeries& RunSeries::rankFor(int rank) {
  auto it = std::lower_bound(ranks_.begin(), ranks_.end(), rank,
                             [](const RankSeries& r, int value) { return r.rank < value; });
  if (it != ranks_.end() && it->rank == rank) return *it;
  RankSeries fresh;
  fresh.rank = rank;
  fresh.series.setKeep(rank_keep_);
  const auto index = size_t(it - ranks_.begin());
  ranks_.insert(it, std::move(fresh));
  fitRankKeep();
  return ranks_[index];
}

void RunSeries::setWorld(int world) {
  world_ = world;
  fitRankKeep();
}

int RunSeries::keepPerRank(int ranks) {
  return int(std::clamp<int64_t>(kRankSamplesPerRun / std::max(1, ranks), 64, SampleSeries::kKeep));
}

void RunSeries::fitRankKeep() {
  const int keep = keepPerRank(std::max(world_, int(ranks_.size())));
  if (keep == rank_keep_) return;
  rank_keep_ = keep;
  for (RankSeries& r : ranks_) r.series.setKeep(keep);
}

void RunSeries::addStep(const StepRow& s) {
  RankSeries& r = rankFor(s.rank);
  const PhaseTimes phases = phaseTimes(s);
  double span_s = 0;
  for (int64_t ns : phases) span_s += double(ns) / kNsPerS;
  // Includes what no phase timed; but a live simulation's steps are sent at a pace of its
  // own, and only its phases are the simulated step's.
  if (!simulated_ && r.last_time_ns > 0 && s.time_ns > r.last_time_ns)
    span_s = double(s.time_ns - r.last_time_ns) / kNsPerS;
  r.last_time_ns = s.time_ns;
  r.epoch = s.epoch;
  r.step = s.step;
  r.loss = s.loss;
  r.mem_params = s.mem_params;
  r.mem_grads = s.mem_grads;
  r.mem_optimizer = s.mem_optimizer;
  r.mem_activations = s.mem_activations;
  r.mem_buffers = s.mem_buffers;
  addTotals(r, phases, 1, s.samples, s.bytes_tx, s.bytes_rx, s.bytes_raw);
  if (r.collectives >= 0) r.collectives += s.allreduces;
  for (int p = 0; p < kPhaseCount; ++p) r.recent[p] += phases[p];
  r.recent_steps.push_back(phases);
  if (r.recent_steps.size() > size_t(kRecentSteps)) {
    for (int p = 0; p < kPhaseCount; ++p) r.recent[p] -= r.recent_steps.front()[p];
    r.recent_steps.pop_front();
  }

  // Samples per second over the last kRateWindowS of this rank's steps.
  if (!r.rate_points.empty()) r.rate_samples += s.samples;  // the first point only marks the start
  r.rate_points.emplace_back(s.time_ns, s.samples);
  while (r.rate_points.size() > 2 &&
         r.rate_points[1].first <= s.time_ns - int64_t(kRateWindowS * kNsPerS)) {
    r.rate_points.pop_front();
    r.rate_samples -= r.rate_points.front().second;
  }
  const int64_t window_ns = r.rate_points.back().first - r.rate_points.front().first;
  if (window_ns > 0)
    r.samples_per_s = double(r.rate_samples) / (double(window_ns) / kNsPerS);
  else if (s.time_ns > 0)
    r.samples_per_s = double(r.samples) / (double(s.time_ns) / kNsPerS);

  Sample sample;
  sample.step = double(s.step);
  sample.time_s = double(s.time_ns) / kNsPerS;
  sample.sent_mb = double(r.bytes_tx) / 1e6;
  if (std::isfinite(s.loss)) {
    sample.loss_sum = sample.loss_min = sample.loss_max = s.loss;
    sample.loss_count = 1;
  }
  sample.loss_scale = s.loss_scale;
  sample.staleness_sum = s.staleness;
  sample.grad_norm_sum = s.grad_norm;
  sample.lr_sum = s.lr;
  sample.tx_bytes = double(s.bytes_tx);
  sample.rx_bytes = double(s.bytes_rx);
  sample.span_s = span_s;
  sample.wait_s = double(phases[waitPhase]) / kNsPerS;
  sample.count = 1;
  r.series.append(sample);
  has_loss_ = has_loss_ || sample.loss_count > 0;
  uses_loss_scale_ = uses_loss_scale_ || s.loss_scale != 1.0;
  uses_staleness_ = uses_staleness_ || s.staleness != 0;
  noteRates(s.grad_norm, s.lr, s.lr);
  if (!bulk_) addToGlobal(s, sample);
}

void RunSeries::noteRates(double grad_norm, double lr_first, double lr_last) {
  uses_grad_norm_ = uses_grad_norm_ || grad_norm != 0;
  if (first_lr_ < 0) first_lr_ = lr_first;
  lr_changes_ = lr_changes_ || lr_first != first_lr_ || lr_last != first_lr_;
}

void RunSeries::addTotals(RankSeries& r, const PhaseTimes& phases, int64_t steps, int64_t samples,
                          int64_t tx, int64_t rx, int64_t raw) {
  r.steps += steps;
  r.samples += samples;
  r.bytes_tx += tx;
  r.bytes_rx += rx;
  r.bytes_raw += raw;
  for (int p = 0; p < kPhaseCount; ++p) r.total[p] += phases[p];
}

void RunSeries::addBin(const StepBin& b, int64_t width) {
  RankSeries& r = rankFor(b.rank);
  const PhaseTimes phases = b.phases();
  double phases_s = 0;
  for (int64_t ns : phases) phases_s += double(ns) / kNsPerS;
  // As addStep: the time since the previous step, or a first step's own phases; a
  // simulation's phases alone (it was sent at a pace of its own).
  double span_s = phases_s;
  if (!simulated_ && r.last_time_ns > 0 && b.last_time_ns > r.last_time_ns)
    span_s = double(b.last_time_ns - r.last_time_ns) / kNsPerS;
  else if (!simulated_ && b.last_time_ns > b.first_time_ns && b.steps > 0)
    span_s = double(b.last_time_ns - b.first_time_ns) / kNsPerS + phases_s / double(b.steps);
  r.last_time_ns = b.last_time_ns;
  r.epoch = b.epoch;
  r.step = b.last_step;
  addTotals(r, phases, b.steps, b.samples, b.bytes_tx, b.bytes_rx, b.bytes_raw);
  r.collectives = -1;  // bins do not count them

  Sample sample;
  sample.step = double(b.last_step);
  sample.time_s = double(b.last_time_ns) / kNsPerS;
  sample.sent_mb = double(r.bytes_tx) / 1e6;
  sample.loss_sum = b.loss_sum;
  sample.loss_count = b.loss_count;
  if (b.loss_count > 0) {
    sample.loss_min = b.loss_min;
    sample.loss_max = b.loss_max;
  }
  sample.loss_scale = b.loss_scale_min;
  sample.staleness_sum = double(b.staleness_sum);
  sample.grad_norm_sum = b.grad_norm_sum;
  sample.lr_sum = b.lr_sum;
  sample.tx_bytes = double(b.bytes_tx);
  sample.rx_bytes = double(b.bytes_rx);
  sample.span_s = span_s;
  sample.wait_s = double(b.wait_ns) / kNsPerS;
  sample.count = b.steps;
  r.series.widen(width);
  r.series.append(sample);
  has_loss_ = has_loss_ || b.loss_count > 0;
  uses_loss_scale_ = uses_loss_scale_ || b.loss_scale_min != 1.0 || b.loss_scale_max != 1.0;
  uses_staleness_ = uses_staleness_ || b.staleness_sum != 0;
  // A bin's mean rate that differs from its first step's means the rate moved inside it.
  const double mean_lr = b.steps > 0 ? b.lr_sum / double(b.steps) : 0;
  noteRates(b.grad_norm_sum, mean_lr, mean_lr);
}

size_t RunSeries::firstBinAsRows(std::span<const StepBin> bins, int world) {
  // Bounds the rows read per rank, whatever the step rate; a thousand ranks' straggler
  // profile needs a few recent steps each, not fifty.
  const bool many = world > kManyRanks;
  const int64_t most_rows = many ? 256 : 4096;
  const int64_t rows_wanted = many ? 8 : kRecentSteps;
  if (bins.empty()) return 0;
  const int64_t window_start = bins.back().last_time_ns - int64_t(kRateWindowS * kNsPerS);
  size_t first = bins.size();
  int64_t rows = 0;
  while (first > 0) {
    --first;
    rows += bins[first].steps;
    const bool enough = rows >= rows_wanted && bins[first].first_time_ns <= window_start;
    if (enough || rows >= most_rows) break;
  }
  return first;
}

void RunSeries::addToGlobal(const StepRow& step, const Sample& sample) {
  if (pending_.empty()) pending_first_ = step.step;
  const int64_t index = step.step - pending_first_;
  if (index < 0) return;  // a late rank's step that was already drawn without it
  if (size_t(index) >= pending_.size()) pending_.resize(size_t(index) + 1);
  Pending& p = pending_[size_t(index)];
  p.loss_sum += sample.loss_sum;
  p.loss_count += sample.loss_count;
  p.time_sum += sample.time_s;
  p.sent_sum += sample.sent_mb;
  p.scale = p.ranks ? std::min(p.scale, sample.loss_scale) : sample.loss_scale;
  p.staleness_sum += sample.staleness_sum;
  p.tx += sample.tx_bytes;
  p.rx += sample.rx_bytes;
  p.span += sample.span_s;
  if (p.ranks == 0 || sample.wait_s < p.last_wait_s) {
    p.last_rank = step.rank;
    p.last_wait_s = sample.wait_s;
  }
  p.most_wait_s = std::max(p.most_wait_s, sample.wait_s);
  p.ranks += 1;
  if (manyRanks()) p.spread.add(spreadValues(sample));
  flushGlobal(false);
}

void RunSeries::flushGlobal(bool all) {
  const int expected = world_ > 0 ? world_ : int(ranks_.size());
  while (!pending_.empty()) {
    Pending& p = pending_.front();
    const bool complete = p.ranks >= expected;
    if (!all && !complete && (bulk_ || pending_.size() < kMaxPendingSteps)) break;
    if (p.ranks > 0) {
      Sample s;
      s.step = double(pending_first_);
      s.time_s = p.time_sum / p.ranks;
      s.sent_mb = p.sent_sum / p.ranks;
      s.loss_sum = p.loss_sum;
      s.loss_count = p.loss_count;
      if (p.loss_count > 0) s.loss_min = s.loss_max = p.loss_sum / double(p.loss_count);
      s.loss_scale = p.scale;
      s.staleness_sum = p.staleness_sum / p.ranks;
      s.tx_bytes = p.tx / p.ranks;
      s.rx_bytes = p.rx / p.ranks;
      s.span_s = p.span / p.ranks;
      s.count = 1;
      global_.append(s);
      if (manyRanks()) spread_.append(p.spread.take(s.step, s.time_s, s.sent_mb));
      // Where every rank waited as long, none arrived last.
      if (complete && p.last_wait_s < p.most_wait_s) noteLastArrival(p.last_rank);
    }
    pending_.pop_front();
    ++pending_first_;
  }
}

void RunSeries::rollBack(int64_t step) {
  for (RankSeries& r : ranks_) {
    r.steps -= r.series.dropAfter(step);
    r.step = std::min(r.step, step);
  }
  global_.dropAfter(step);
  spread_.dropAfter(step);
  // Steps not yet drawn for every rank: those after the checkpoint come again.
  const int64_t keep = std::max<int64_t>(0, step - pending_first_ + 1);
  if (size_t(keep) < pending_.size()) pending_.resize(size_t(keep));
  std::erase_if(evals_, [step](const EvalPoint& p) { return p.step > double(step); });
}

bool isTimelineMark(const EventRow& event) {
  return event.rank >= 0 &&
         (event.kind == "fault" || event.kind == "failure" || event.kind == "overflow" ||
          event.kind == "restart" || event.kind == "resumed");
}

void RunSeries::addEvent(const EventRow& e) {
  constexpr size_t kMaxEvents = 1000;  // a long fp16 run's overflows: the first thousand
  const std::string bigram = "bigram baseline ";
  if (e.kind == "baseline" && e.text.rfind(bigram, 0) == 0) {
    bigram_baseline_ = std::strtod(e.text.c_str() + bigram.size(), nullptr);
    const std::string tokens = "; samples of ";
    if (const size_t at = e.text.find(tokens); at != std::string::npos)
      tokens_per_sample_ = std::atoi(e.text.c_str() + at + tokens.size());
  }
  if (e.kind == "activations") rankFor(e.rank).activations = parseActivationsEvent(e.text);
  if ((e.kind == "quiet" || e.kind == "heard") && e.rank >= 0) {
    RankSeries& r = rankFor(e.rank);
    r.quiet = e.kind == "quiet";
    r.quiet_text = r.quiet ? e.text : "";
  }
  if (!isTimelineMark(e) || events_.size() >= kMaxEvents) return;
  for (const ChartEvent& seen : events_)
    if (seen.step == e.step && seen.kind == e.kind) return;
  events_.push_back({e.step, e.rank, e.kind, e.text});
}

double RunSeries::stepX(int64_t step, XAxis x) const {
  const std::vector<Sample>& samples =
      !global_.empty() || ranks_.empty() ? global_.samples() : ranks_.front().series.samples();
  if (samples.empty()) return std::numeric_limits<double>::quiet_NaN();
  const auto at = std::lower_bound(samples.begin(), samples.end(), double(step),
                                   [](const Sample& s, double v) { return s.step < v; });
  return sampleX(at == samples.end() ? samples.back() : *at, x);
}

void RunSeries::addServerLoad(const ServerLoadRow& l) {
  auto it = std::lower_bound(shards_.begin(), shards_.end(), l.shard,
                             [](const ShardLoad& s, int shard) { return s.shard < shard; });
  if (it == shards_.end() || it->shard != l.shard) {
    it = shards_.insert(it, ShardLoad{});
    it->shard = l.shard;
  }
  ShardLoad& s = *it;
  s.rank = l.rank;
  s.key_begin = l.key_begin;
  s.key_end = l.key_end;
  s.pushes += l.pushes;
  s.pulls += l.pulls;
  s.bytes_rx += l.bytes_rx;
  s.bytes_tx += l.bytes_tx;
  s.busy_ns += l.busy_ns;
  s.idle_ns += l.idle_ns;
  s.held_ns += l.held_ns;
  s.interval_ns += l.interval_ns;
  s.max_staleness = std::max(s.max_staleness, l.max_staleness);
  s.version = std::max(s.version, l.version);
}

void RunSeries::addEval(const EvalRow& e) {
  const int row = rowOfRank(e.rank);
  double sent_mb = 0;
  if (row >= 0) {
    const auto& samples = ranks_[size_t(row)].series.samples();
    auto it = std::lower_bound(samples.begin(), samples.end(), double(e.step),
                               [](const Sample& s, double step) { return s.step < step; });
    sent_mb = it != samples.end() ? it->sent_mb : double(ranks_[size_t(row)].bytes_tx) / 1e6;
  }
  for (EvalPoint& p : evals_) {
    if (p.step != double(e.step)) continue;
    // Several ranks evaluated the same step: their mean.
    p.accuracy = (p.accuracy * p.ranks + e.test_accuracy) / (p.ranks + 1);
    p.loss = (p.loss * p.ranks + e.test_loss) / (p.ranks + 1);
    p.ranks += 1;
    return;
  }
  evals_.push_back(
      {double(e.step), double(e.time_ns) / kNsPerS, sent_mb, e.test_accuracy, e.test_loss, 1});
}

void RunSeries::setRank(const RankRow& row) {
  RankSeries& r = rankFor(row.rank);
  r.host = row.host;
  r.lost_messages = row.seq_gaps;
  // "left": an elastic restart went on without it.
  if (row.status == "done" || row.status == "failed" || row.status == "left") r.said_bye = true;
  r.failed = row.status == "failed";
}

int64_t RunSeries::lostMessages() const {
  int64_t lost = 0;
  for (const RankSeries& r : ranks_) lost += r.lost_messages;
  return lost;
}

void RunSeries::absorb(RunSeries&& other) {
  for (RankSeries& r : other.ranks_) {
    auto it = std::lower_bound(ranks_.begin(), ranks_.end(), r.rank,
                               [](const RankSeries& a, int value) { return a.rank < value; });
    ranks_.insert(it, std::move(r));
  }
  fitRankKeep();
  for (EvalPoint& e : other.evals_) evals_.push_back(e);
  uses_loss_scale_ = uses_loss_scale_ || other.uses_loss_scale_;
  has_loss_ = has_loss_ || other.has_loss_;
  uses_staleness_ = uses_staleness_ || other.uses_staleness_;
  uses_grad_norm_ = uses_grad_norm_ || other.uses_grad_norm_;
  if (std::isnan(bigram_baseline_)) bigram_baseline_ = other.bigram_baseline_;
  tokens_per_sample_ = std::max(tokens_per_sample_, other.tokens_per_sample_);
  lr_changes_ = lr_changes_ || other.lr_changes_ ||
                (first_lr_ >= 0 && other.first_lr_ >= 0 && first_lr_ != other.first_lr_);
  if (first_lr_ < 0) first_lr_ = other.first_lr_;
}

// Sample i of every training rank covers the same steps when the ranks took as many: their
// mean. A parameter server's rank takes no steps and is left out (its empty series would
// leave the run without a curve).
void RunSeries::globalFromRanks() {
  global_ = SampleSeries();
  std::vector<const RankSeries*> training;
  for (const RankSeries& r : ranks_)
    if (!r.series.samples().empty()) training.push_back(&r);
  size_t n = training.empty() ? 0 : training.front()->series.samples().size();
  for (const RankSeries* r : training) n = std::min(n, r->series.samples().size());
  for (size_t i = 0; i < n; ++i) {
    Sample mean = training.front()->series.samples()[i];
    double time = 0, sent = 0, tx = 0, rx = 0, span = 0, stale = 0;
    double low = 0, high = 0;
    int with_loss = 0;
    mean.loss_sum = 0;
    mean.loss_count = 0;
    for (const RankSeries* r : training) {
      const Sample& s = r->series.samples()[i];
      mean.loss_sum += s.loss_sum;
      mean.loss_count += s.loss_count;
      if (s.loss_count > 0) {
        low += s.loss_min;
        high += s.loss_max;
        ++with_loss;
      }
      mean.loss_scale = std::min(mean.loss_scale, s.loss_scale);
      time += s.time_s;
      sent += s.sent_mb;
      tx += s.tx_bytes;
      rx += s.rx_bytes;
      span += s.span_s;
      stale += s.staleness_sum;
    }
    const double k = double(training.size());
    // Bounds of the mean over ranks: one rank's spike lifts it by spike / ranks, as it should.
    if (with_loss > 0) {
      mean.loss_min = low / with_loss;
      mean.loss_max = high / with_loss;
    }
    mean.time_s = time / k;
    mean.sent_mb = sent / k;
    mean.tx_bytes = tx / k;
    mean.rx_bytes = rx / k;
    mean.span_s = span / k;
    mean.staleness_sum = stale / k;
    global_.append(mean);
    if (training.size() > size_t(kManyRanks)) spreadFromRanks(training, i, mean);
  }
}

// Sample i of every training rank, its spread across them (a stored run's bins).
void RunSeries::spreadFromRanks(const std::vector<const RankSeries*>& training, size_t i,
                                const Sample& mean) {
  SpreadCollector collector;
  for (const RankSeries* r : training) collector.add(spreadValues(r->series.samples()[i]));
  SpreadSample sample = collector.take(mean.step, mean.time_s, mean.sent_mb);
  sample.count = mean.count;
  spread_.append(sample);
}

void RunSeries::noteLastArrival(int rank) {
  if (rank < 0) return;
  last_arrivals_.push_back(rank);
  ++arrival_counts_[rank];
  if (last_arrivals_.size() <= size_t(kArrivalSteps)) return;
  const int oldest = last_arrivals_.front();
  last_arrivals_.pop_front();
  if (--arrival_counts_[oldest] == 0) arrival_counts_.erase(oldest);
}

// A stored run's last steps, aligned from each rank's latest: the last to arrive in each.
void RunSeries::arrivalsFromRanks() {
  size_t steps = std::numeric_limits<size_t>::max();
  bool any = false;
  for (const RankSeries& r : ranks_) {
    if (r.recent_steps.empty()) continue;
    steps = std::min(steps, r.recent_steps.size());
    any = true;
  }
  if (!any) return;
  for (size_t back = steps; back-- > 0;) {
    int last = -1;
    int64_t least = 0, most = 0;
    for (const RankSeries& r : ranks_) {
      if (r.recent_steps.empty()) continue;
      const int64_t wait = r.recent_steps[r.recent_steps.size() - 1 - back][waitPhase];
      if (last < 0 || wait < least) {
        last = r.rank;
        least = wait;
      }
      most = std::max(most, wait);
    }
    if (least < most) noteLastArrival(last);
  }
}

std::pair<int, int> RunSeries::mostOftenLast() const {
  std::pair<int, int> most{-1, 0};
  for (const auto& [rank, count] : arrival_counts_)
    if (count > most.second) most = {rank, count};
  return most;
}

void RunSeries::endBulkLoad() {
  if (!bulk_) return;
  globalFromRanks();
  arrivalsFromRanks();
  bulk_ = false;
}

void RunSeries::finish(const std::string& status) {
  finished_ = true;
  if (bulk_) {
    globalFromRanks();
    arrivalsFromRanks();
  } else {
    flushGlobal(true);
  }
  for (RankSeries& r : ranks_)
    if (!r.said_bye && status == "failed") r.failed = true;
  updateStates();
}

void RunSeries::findStraggler() {
  straggler_rank_ = -1;
  straggler_reason_.clear();
  struct Profile {
    int row;
    double compute_ms, wait_ms;
  };
  std::vector<Profile> profiles;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    const RankSeries& r = ranks_[i];
    const double n = double(r.recent_steps.size());
    if (n < 5) continue;
    profiles.push_back(
        {int(i), computeNs(r.recent) / n / 1e6, double(r.recent[waitPhase]) / n / 1e6});
  }
  if (profiles.size() < 2) return;
  auto slowest = std::max_element(profiles.begin(), profiles.end(),
                                  [](auto& a, auto& b) { return a.compute_ms < b.compute_ms; });
  std::vector<double> others_compute, others_wait;
  for (const Profile& p : profiles) {
    if (&p == &*slowest) continue;
    others_compute.push_back(p.compute_ms);
    others_wait.push_back(p.wait_ms);
  }
  const double typical = median(others_compute);
  // Slower than the rest by a margin that noise on a shared machine does not reach.
  if (slowest->compute_ms < 1.3 * typical || slowest->compute_ms - typical < 0.5) return;
  straggler_rank_ = ranks_[size_t(slowest->row)].rank;
  char text[200];
  std::snprintf(text, sizeof text,
                "rank %d computes %.1f ms/step, the others %.1f; they wait %.1f ms/step for it",
                straggler_rank_, slowest->compute_ms, typical, median(others_wait));
  straggler_reason_ = text;
}

void RunSeries::updateStates() {
  findStraggler();
  for (RankSeries& r : ranks_) {
    r.straggler = r.rank == straggler_rank_;
    const double n = double(r.recent_steps.size());
    double step_ns = 0;
    for (int64_t ns : r.recent) step_ns += double(ns);
    const bool waits = n > 0 && step_ns > 0 && double(r.recent[waitPhase]) > 0.3 * step_ns;
    if (r.failed)
      r.state = RankState::Failed;
    else if (r.said_bye || finished_)
      r.state = RankState::Done;
    else if (r.quiet)
      r.state = RankState::Silent;
    else if (r.step < 0)
      r.state = RankState::Starting;
    else if (r.straggler)
      r.state = RankState::Straggling;
    else if (waits)
      r.state = RankState::Waiting;
    else
      r.state = RankState::Running;
  }
}

std::array<double, kPhaseCount> RunSeries::phaseMeansMs(int row) const {
  std::array<double, kPhaseCount> means{};
  const RankSeries& r = ranks_.at(size_t(row));
  const PhaseTimes& sums = finished_ ? r.total : r.recent;
  const double n = finished_ ? double(r.steps) : double(r.recent_steps.size());
  if (n <= 0) return means;
  for (int p = 0; p < kPhaseCount; ++p) means[p] = double(sums[p]) / n / 1e6;
  return means;
}

}  // namespace ranklab
