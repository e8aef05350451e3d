// Rank side of telemetry: ZeroMQ PUSH that never blocks training.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "comm/telemetry/curve_keys.h"
#include "comm/telemetry/telemetry.pb.h"

namespace ranklab {

// A ZeroMQ context several Reporters share: a process that sends for many ranks (a live
// simulation) needs one I/O thread or two, not one per rank.
struct TelemetryContext;
// max_sockets > 0: the sockets it may hold (ZeroMQ's default is 1,023).
std::shared_ptr<TelemetryContext> makeTelemetryContext(int io_threads, int max_sockets = 0);

struct ReporterOptions {
  std::string endpoint;  // e.g. tcp://127.0.0.1:5555; "" disables telemetry
  std::string run_id;
  int rank = 0;
  size_t spool_limit = 4096;    // messages kept while the collector is unreachable
  int close_timeout_ms = 3000;  // how long close() may wait to drain the spool
  // > 0: a step that comes less than this after the previous one waits in the spool
  // until the oldest waiting one is this old, and they leave together (each with its own
  // seq and time_ns); any other message sends them first; a batch holds at most
  // spool_limit / 2 steps. Slower steps leave at once. Fewer wake-ups of zmq's I/O thread
  // and of the collector per step.
  int step_batch_ms = 0;
  // Set: connect encrypted, as this run's CURVE client (curve_keys.h).
  std::optional<RankCurveKeys> curve;
  // Set: the socket lives in this shared context; unset: in one of its own.
  std::shared_ptr<TelemetryContext> context;
};

// Sends Envelopes with per-rank sequence numbers; its methods may be called from two threads
// (training and heartbeats), one at a time. send() never blocks: a message the
// socket will not take at once (or a step waiting for its batch) waits in a bounded
// spool; when the spool is full the oldest is dropped (the collector sees the hole in
// `seq`).
class Reporter {
 public:
  explicit Reporter(ReporterOptions options);
  ~Reporter();  // close() with the configured timeout; never throws
  Reporter(const Reporter&) = delete;
  Reporter& operator=(const Reporter&) = delete;

  void hello(int world, const std::string& host, int64_t pid);
  void step(const telemetry::Step& step);
  void eval(const telemetry::Eval& eval);
  void event(const std::string& kind, const std::string& text, int64_t step);
  void span(const telemetry::Span& span);
  // A steady-clock time (comm/steady_clock.h) on this reporter's clock: ns since it started,
  // the clock of every envelope's time_ns and of a Span's start and end.
  int64_t sinceStart(int64_t steady_ns) const { return steady_ns - start_ns_; }
  void serverLoad(const telemetry::ServerLoad& load);
  void heartbeat();
  void bye(int exit_status, int64_t train_ns, const std::string& reason);

  // Sends what the spool holds (steps waiting for their batch too) as far as the socket
  // takes it now; never blocks. Before a pause in stepping (an evaluation, a checkpoint), so
  // the last steps do not wait through it.
  void flush();
  // Drains the spool, waiting at most close_timeout_ms. Returns messages still undelivered.
  size_t close();

  uint64_t sent() const { return sent_; }
  uint64_t dropped() const { return dropped_; }
  size_t spooled() const { return spool_.size(); }

 private:
  // How a message meets the step batch: kNow sends it (and the batch before it) at once;
  // kStep may wait for its batch (steps under step_batch_ms); kJoin waits only in a batch
  // already open (a sampled step's spans ride with its steps).
  enum class Batching { kNow, kStep, kJoin };
  void send(telemetry::Envelope& envelope, Batching batching = Batching::kNow);
  void drainSpool();
  // Whether a step sent at `now` waits for its batch (step_batch_ms > 0).
  bool batchThisStep(int64_t now);
  bool batchOpen(int64_t now) const;
  // Appends to the spool; when it is full the oldest message is dropped.
  void keep(std::string bytes);

  struct Socket;
  std::mutex mutex_;  // send(), flush() and close(): the socket and the spool
  ReporterOptions options_;
  std::unique_ptr<Socket> socket_;
  std::deque<std::string> spool_;
  uint64_t next_seq_ = 0;
  uint64_t sent_ = 0;
  uint64_t dropped_ = 0;
  int64_t start_ns_ = 0;
  int64_t last_step_ns_ = 0;    // when the previous step was sent (at first: construction)
  int64_t batch_start_ns_ = 0;  // when the first step of the waiting batch was sent
};

}  // namespace ranklab
