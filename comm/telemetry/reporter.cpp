// Rank side of telemetry: serialize, try a non-blocking send, spool what the socket refuses.
#include "comm/telemetry/reporter.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <utility>

#include <zmq.hpp>

#include "comm/steady_clock.h"
#include "comm/telemetry/collector.h"  // kWireVersion

namespace ranklab {
namespace {

// Messages zmq may hold per connected peer before send() reports EAGAIN.
constexpr int kSendHighWaterMark = 1000;
// Pause between drain attempts in close(): short, so close() ends soon after delivery.
constexpr auto kDrainRetry = std::chrono::milliseconds(2);

// True when zmq took the message; false when it would block or failed (caller keeps it).
bool trySend(zmq::socket_t& socket, const std::string& bytes) {
  try {
    return socket.send(zmq::buffer(bytes), zmq::send_flags::dontwait).has_value();
  } catch (const zmq::error_t&) {
    return false;  // EINTR or a transient error: the spool retries, its bound counts losses
  }
}

}  // namespace

struct TelemetryContext {
  TelemetryContext(int io_threads, int max_sockets) : context(io_threads) {
    // ZeroMQ refuses a context's 1,024th socket by default ("Too many open files").
    if (max_sockets > 0) context.set(zmq::ctxopt::max_sockets, max_sockets);
  }
  zmq::context_t context;
};

std::shared_ptr<TelemetryContext> makeTelemetryContext(int io_threads, int max_sockets) {
  return std::make_shared<TelemetryContext>(io_threads, max_sockets);
}

struct Reporter::Socket {
  explicit Socket(std::shared_ptr<TelemetryContext> shared)
      : context(shared ? std::move(shared) : makeTelemetryContext(1)),
        push(context->context, zmq::socket_type::push) {}
  std::shared_ptr<TelemetryContext> context;  // outlives the socket (declared first)
  zmq::socket_t push;
};

Reporter::Reporter(ReporterOptions options)
    : options_(std::move(options)), start_ns_(steadyNowNs()), last_step_ns_(start_ns_) {
  if (options_.endpoint.empty()) return;  // telemetry disabled: every call is a no-op
  socket_ = std::make_unique<Socket>(options_.context);
  try {
    socket_->push.set(zmq::sockopt::sndhwm, kSendHighWaterMark);
    // Refuse messages while no collector is connected, so they wait in our bounded spool.
    socket_->push.set(zmq::sockopt::immediate, true);
    // Never hang in an unexpected teardown; close() raises it to its remaining budget.
    socket_->push.set(zmq::sockopt::linger, 0);
    // A PUSH socket reads nothing, but a peer that speaks to it must not make it allocate.
    socket_->push.set(zmq::sockopt::maxmsgsize, int64_t{1} << 20);
    if (options_.curve) {
      socket_->push.set(zmq::sockopt::curve_serverkey, options_.curve->server_public);
      socket_->push.set(zmq::sockopt::curve_publickey, options_.curve->client.public_key);
      socket_->push.set(zmq::sockopt::curve_secretkey, options_.curve->client.secret_key);
    }
    socket_->push.connect(options_.endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("telemetry reporter: connect " + options_.endpoint + ": " + e.what());
  }
}

Reporter::~Reporter() {
  try {
    close();
  } catch (...) {
    // A destructor must not throw; undelivered telemetry is already lost.
  }
}

void Reporter::hello(int world, const std::string& host, int64_t pid) {
  if (!socket_) return;
  telemetry::Envelope envelope;
  auto* body = envelope.mutable_hello();
  body->set_run_id(options_.run_id);
  body->set_world(world);
  body->set_host(host);
  body->set_pid(pid);
  send(envelope);
}

void Reporter::step(const telemetry::Step& step) {
  if (!socket_) return;
  telemetry::Envelope envelope;
  *envelope.mutable_step() = step;
  send(envelope, Batching::kStep);
}

void Reporter::eval(const telemetry::Eval& eval) {
  if (!socket_) return;
  telemetry::Envelope envelope;
  *envelope.mutable_eval() = eval;
  send(envelope);
}

void Reporter::event(const std::string& kind, const std::string& text, int64_t step) {
  if (!socket_) return;
  telemetry::Envelope envelope;
  auto* body = envelope.mutable_event();
  body->set_kind(kind);
  body->set_text(text);
  body->set_step(step);
  send(envelope);
}

void Reporter::span(const telemetry::Span& span) {
  if (!socket_) return;
  telemetry::Envelope envelope;
  *envelope.mutable_span() = span;
  send(envelope, Batching::kJoin);
}

void Reporter::serverLoad(const telemetry::ServerLoad& load) {
  if (!socket_) return;
  telemetry::Envelope envelope;
  *envelope.mutable_server_load() = load;
  send(envelope);
}

void Reporter::heartbeat() {
  if (!socket_) return;
  telemetry::Envelope envelope;
  envelope.mutable_heartbeat();
  send(envelope);
}

void Reporter::bye(int exit_status, int64_t train_ns, const std::string& reason) {
  if (!socket_) return;
  telemetry::Envelope envelope;
  auto* body = envelope.mutable_bye();
  body->set_exit_status(exit_status);
  body->set_train_ns(train_ns);
  body->set_reason(reason);
  send(envelope);
}

void Reporter::send(telemetry::Envelope& envelope, Batching batching) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!socket_) return;
  const int64_t now = steadyNowNs();
  envelope.set_version(kWireVersion);
  envelope.set_run_id(options_.run_id);
  envelope.set_rank(options_.rank);
  envelope.set_seq(next_seq_++);  // taken even if dropped later, so the collector sees the hole
  envelope.set_time_ns(now - start_ns_);
  std::string bytes = envelope.SerializeAsString();
  const bool waits =
      options_.step_batch_ms > 0 && ((batching == Batching::kStep && batchThisStep(now)) ||
                                     (batching == Batching::kJoin && batchOpen(now)));
  if (waits) {
    keep(std::move(bytes));
    return;
  }
  drainSpool();
  // Only send directly behind an empty spool, so messages keep their order.
  if (spool_.empty() && trySend(socket_->push, bytes)) {
    ++sent_;
    return;
  }
  keep(std::move(bytes));
}

bool Reporter::batchThisStep(int64_t now) {
  const int64_t batch_ns = int64_t{options_.step_batch_ms} * 1'000'000;
  // Only steps that come fast wait: one after a pause (slow steps, a straggler, the first
  // after an evaluation) would otherwise wait a whole step for the next message.
  const bool fast = now - last_step_ns_ < batch_ns;
  last_step_ns_ = now;
  if (!fast) return false;
  if (spool_.empty()) batch_start_ns_ = now;
  // A batch never takes more than half the spool, so waiting steps are not dropped.
  return now - batch_start_ns_ < batch_ns && spool_.size() < options_.spool_limit / 2;
}

bool Reporter::batchOpen(int64_t now) const {
  const int64_t batch_ns = int64_t{options_.step_batch_ms} * 1'000'000;
  return !spool_.empty() && now - batch_start_ns_ < batch_ns &&
         spool_.size() < options_.spool_limit / 2;
}

void Reporter::keep(std::string bytes) {
  if (options_.spool_limit == 0) {
    ++dropped_;
    return;
  }
  if (spool_.size() >= options_.spool_limit) {
    spool_.pop_front();  // the oldest goes first: recent state matters most to a live view
    ++dropped_;
  }
  spool_.push_back(std::move(bytes));
}

void Reporter::drainSpool() {
  while (!spool_.empty() && trySend(socket_->push, spool_.front())) {
    spool_.pop_front();
    ++sent_;
  }
}

void Reporter::flush() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (socket_) drainSpool();
}

size_t Reporter::close() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!socket_) return spool_.size();
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(std::max(0, options_.close_timeout_ms));
  drainSpool();
  while (!spool_.empty() && Clock::now() < deadline) {
    std::this_thread::sleep_for(kDrainRetry);
    drainSpool();
  }
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  // zmq still holds what it accepted; let it reach the wire within the rest of the budget.
  socket_->push.set(zmq::sockopt::linger, static_cast<int>(std::max<int64_t>(0, left)));
  socket_.reset();  // terminating the context waits at most that linger
  return spool_.size();
}

}  // namespace ranklab
