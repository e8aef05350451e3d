// A per-rank Gantt of step phases over a window of steps, built from step rows: each step
// ends at its time_ns and its phases run back from there in the trainer's order. A
// pipeline's steps are drawn from their pass spans instead: each micro-batch's forward and
// backward where it ran, and the gaps between them as wait (the bubble). Ranks'
// clocks start separately; for synchronous strategies they are aligned at the barrier
// that ends the wait of the window's first common step (every rank leaves it together).
#pragma once

#include <QString>
#include <cstdint>
#include <limits>
#include <vector>

#include "storage/records.h"
#include "views/models/run_series.h"  // isTimelineMark

namespace ranklab {

// Which group a communication bar's time went to (3D parallelism: each its own colour).
enum class CommGroup { kData, kTensor, kPipeline };

struct TimelineBar {
  int rank = 0;
  int64_t step = 0;
  int phase = 0;  // Phase
  double start_ms = 0, end_ms = 0;
  int micro = -1;  // a pipeline pass's micro-batch; -1: the step's whole phase
  // A comm bar's group: the tensor slices' f and g (timed inside the passes, drawn here),
  // the pipeline's token table, the data group's gradient sum.
  CommGroup group = CommGroup::kData;
  // On the critical path: the step's last rank to reach its collective, whom every other
  // rank waited for (storage/analysis/critical_path.h: the same rank, step by step).
  bool on_path = false;
};

// Time a rank spent outside its steps (an evaluation, a checkpoint), on the bars' axis.
struct TimelineSpan {
  int rank = 0;
  int64_t step = 0;  // the step before it
  QString kind;      // evaluate | checkpoint (pipeline passes become bars)
  double start_ms = 0, end_ms = 0;
};

// A piece of a sampled step's communication (a ring hop, a bucket), drawn inside the step.
struct TimelineHop {
  int rank = 0;
  int64_t step = 0;
  QString kind;  // ring-rs | ring-ag | bucket | ps-push | ps-reply
  int part = -1, peer = -1, chunk = -1;
  int64_t bytes = 0;
  double start_ms = 0, end_ms = 0;
};

// A piece of a sampled step's work on the rank's device, timed on the device's clock (a
// GPU's events): the batch's copy, a layer's forward or backward, the loss head, the
// update. Drawn as a strip along the top of the step; the gaps between pieces are the
// device idle, waiting for the host.
struct TimelineDevicePiece {
  int rank = 0;
  int64_t step = 0;
  QString kind;    // dev-input | dev-fwd | dev-bwd | dev-loss | dev-update
  int layer = -1;  // dev-fwd, dev-bwd: the layer's index in the model
  double start_ms = 0, end_ms = 0;
};

// Something that happened to a rank at the end of a step (a fault, the launcher's verdict on
// it, an AMP overflow), drawn as a mark on the rank's row.
struct TimelineMark {
  int rank = 0;
  int64_t step = 0;
  QString kind;  // fault | failure | overflow | restart | resumed
  QString text;
  double at_ms = 0;
};

struct TimelineData {
  int64_t run_id = 0;
  int64_t first_step = 0, last_step = -1;
  std::vector<int> ranks;                   // ascending
  std::vector<TimelineBar> bars;            // by rank, then start
  std::vector<TimelineSpan> spans;          // of the window's ranks, from their stored spans
  std::vector<TimelineMark> marks;          // at the end of their step, on their rank's row
  std::vector<TimelineHop> hops;            // the sampled steps' communication pieces
  std::vector<TimelineDevicePiece> device;  // the sampled steps' device pieces
  double begin_ms = 0, end_ms = 0;          // extent of the bars
  int64_t aligned_at_step = -1;             // -1: not aligned (each rank on its own clock)
  int64_t spans_total = 0;  // spans of the window's ranks before capSpans kept `spans`
  bool empty() const { return bars.empty(); }
  bool spansLeftOut() const { return spans_total > int64_t(spans.size()); }
};

// How many spans a timeline lays out: an imported trace may hold a million of them, which
// no row can show at once. Of the spans that reach into [from_ms, to_ms], each rank keeps
// its longest `per_rank`, and all ranks together `total`.
struct SpanCap {
  static constexpr int kPerRank = 2'000;
  static constexpr int kTotal = 20'000;
  int per_rank = kPerRank;
  int total = kTotal;
  double from_ms = -std::numeric_limits<double>::infinity();
  double to_ms = std::numeric_limits<double>::infinity();
};

// Of a timeline's spans, those the cap keeps (the longest first), in their order. The
// timeline's spans_total still says how many there were.
std::vector<TimelineSpan> capSpans(const std::vector<TimelineSpan>& spans, const SpanCap& cap);
// "showing 2,000 of 1,000,000 spans …: zoom in to see the rest"; "" when none is left out.
QString spanCapText(const TimelineData& data);

// align: the run synchronises every step (all-reduce, synchronous parameter server).
// spans: the run's stored spans; those of the window's ranks are placed on the same axis.
TimelineData buildTimeline(int64_t run_id, const std::vector<StepRow>& steps, bool align,
                           const std::vector<SpanRow>& spans = {},
                           const std::vector<EventRow>& events = {});

// Each rank's time in the window's bars outside waiting for others (data.ranks' order, ms):
// what the timeline's overview of all ranks colours them by.
std::vector<double> ownWorkMs(const TimelineData& data);

// "rank 2 · step 412 · backward 12.30 ms (1234.50 → 1246.80 ms)"
QString describeBar(const TimelineBar& bar);
// "rank 1 · evaluate after step 468 · 38.20 ms (1250.10 → 1288.30 ms)"
QString describeSpan(const TimelineSpan& span);
// "rank 0 · step 50 · ring hop 2, reduce-scatter: chunk 2 to rank 1, 229.6 KB in 0.13 ms"
QString describeHop(const TimelineHop& hop);
// "rank 0 · step 50 · layer 2 backward on the device: 0.121 ms; the device was busy 0.81 of
// the 1.20 ms from its first piece to its last in this step (68 %), idle in the gaps"
QString describeDevicePiece(const TimelineData& data, const TimelineDevicePiece& piece);
// "rank 2 · fault after step 20: kill: SIGKILL after step 20"
QString describeMark(const TimelineMark& mark);

}  // namespace ranklab
