// Telemetry wire over real loopback sockets: Reporter (PUSH) -> Collector (PULL).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "comm/telemetry/collector.h"
#include "comm/telemetry/reporter.h"

namespace ranklab {
namespace {

using Clock = std::chrono::steady_clock;
using telemetry::Envelope;

// Receives until `count` valid messages arrived or 10 s passed; rejected ones accumulate.
std::vector<Envelope> collect(Collector& collector, size_t count,
                              std::vector<RejectedMessage>* rejected = nullptr) {
  std::vector<Envelope> all;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (all.size() < count && Clock::now() < deadline) {
    for (auto& envelope : collector.receive(50)) all.push_back(std::move(envelope));
    if (rejected)
      for (auto& r : collector.takeRejected()) rejected->push_back(std::move(r));
  }
  return all;
}

// An endpoint on 127.0.0.1 that nobody listens on (a collector bound it and went away).
std::string freeEndpoint() {
  Collector probe("probe", 1);
  return probe.endpoint();
}

ReporterOptions options(const std::string& endpoint, const std::string& run_id, int rank) {
  ReporterOptions o;
  o.endpoint = endpoint;
  o.run_id = run_id;
  o.rank = rank;
  return o;
}

telemetry::Step fullStep() {
  telemetry::Step s;
  s.set_step(42);
  s.set_epoch(3);
  s.set_samples(4096);
  auto* p = s.mutable_phases();
  p->set_data_ns(1);
  p->set_forward_ns(2);
  p->set_backward_ns(3);
  p->set_compress_ns(4);
  p->set_comm_ns(5);
  p->set_wait_ns(6);
  p->set_update_ns(7);
  s.set_loss(0.125);
  s.set_bytes_tx(1000);
  s.set_bytes_rx(2000);
  s.set_bytes_raw(4000);
  s.set_lr(0.01);
  s.set_loss_scale(65536.0);
  s.set_overflow(true);
  s.set_staleness(2);
  return s;
}

void expectFullStep(const telemetry::Step& s) {
  EXPECT_EQ(s.step(), 42);
  EXPECT_EQ(s.epoch(), 3);
  EXPECT_EQ(s.samples(), 4096);
  EXPECT_EQ(s.phases().data_ns(), 1);
  EXPECT_EQ(s.phases().forward_ns(), 2);
  EXPECT_EQ(s.phases().backward_ns(), 3);
  EXPECT_EQ(s.phases().compress_ns(), 4);
  EXPECT_EQ(s.phases().comm_ns(), 5);
  EXPECT_EQ(s.phases().wait_ns(), 6);
  EXPECT_EQ(s.phases().update_ns(), 7);
  EXPECT_DOUBLE_EQ(s.loss(), 0.125);
  EXPECT_EQ(s.bytes_tx(), 1000);
  EXPECT_EQ(s.bytes_rx(), 2000);
  EXPECT_EQ(s.bytes_raw(), 4000);
  EXPECT_DOUBLE_EQ(s.lr(), 0.01);
  EXPECT_DOUBLE_EQ(s.loss_scale(), 65536.0);
  EXPECT_TRUE(s.overflow());
  EXPECT_EQ(s.staleness(), 2);
}

// A hand-built envelope, for raw sockets that play a misbehaving rank.
std::string rawEnvelope(uint32_t version, const std::string& run_id, int rank, uint64_t seq,
                        bool with_body = true) {
  Envelope e;
  e.set_version(version);
  e.set_run_id(run_id);
  e.set_rank(rank);
  e.set_seq(seq);
  if (with_body) e.mutable_heartbeat();
  return e.SerializeAsString();
}

// A plain PUSH socket that sends whatever bytes the test gives it.
struct RawPush {
  zmq::context_t context{1};
  zmq::socket_t socket{context, zmq::socket_type::push};
  explicit RawPush(const std::string& endpoint) {
    socket.set(zmq::sockopt::linger, 2000);
    socket.connect(endpoint);
  }
  void send(const std::string& bytes) { socket.send(zmq::buffer(bytes), zmq::send_flags::none); }
};

bool anyReasonContains(const std::vector<RejectedMessage>& rejected, const std::string& text) {
  for (const auto& r : rejected)
    if (r.reason.find(text) != std::string::npos) return true;
  return false;
}

TEST(TelemetryWire, RoundTripCarriesEveryMessageAndField) {
  Collector collector("run-1", 2);
  Reporter reporter(options(collector.endpoint(), "run-1", 1));
  reporter.hello(2, "node-a", 1234);
  reporter.step(fullStep());
  telemetry::Eval eval;
  eval.set_step(42);
  eval.set_epoch(3);
  eval.set_test_loss(0.5);
  eval.set_test_accuracy(0.875);
  reporter.eval(eval);
  reporter.event("checkpoint", "saved ckpt-42", 42);
  telemetry::Span span;
  span.set_phase("forward");
  span.set_start_ns(100);
  span.set_end_ns(250);
  span.set_step(42);
  reporter.span(span);
  reporter.heartbeat();
  reporter.bye(0, 987654321, "done");
  EXPECT_EQ(reporter.close(), 0u);
  EXPECT_EQ(reporter.sent(), 7u);
  EXPECT_EQ(reporter.dropped(), 0u);

  auto got = collect(collector, 7);
  ASSERT_EQ(got.size(), 7u);
  int64_t last_time = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].version(), kWireVersion);
    EXPECT_EQ(got[i].run_id(), "run-1");
    EXPECT_EQ(got[i].rank(), 1);
    EXPECT_EQ(got[i].seq(), i);
    EXPECT_GE(got[i].time_ns(), last_time);
    last_time = got[i].time_ns();
  }
  ASSERT_TRUE(got[0].has_hello());
  EXPECT_EQ(got[0].hello().run_id(), "run-1");
  EXPECT_EQ(got[0].hello().world(), 2);
  EXPECT_EQ(got[0].hello().host(), "node-a");
  EXPECT_EQ(got[0].hello().pid(), 1234);
  ASSERT_TRUE(got[1].has_step());
  expectFullStep(got[1].step());
  ASSERT_TRUE(got[2].has_eval());
  EXPECT_EQ(got[2].eval().step(), 42);
  EXPECT_EQ(got[2].eval().epoch(), 3);
  EXPECT_DOUBLE_EQ(got[2].eval().test_loss(), 0.5);
  EXPECT_DOUBLE_EQ(got[2].eval().test_accuracy(), 0.875);
  ASSERT_TRUE(got[3].has_event());
  EXPECT_EQ(got[3].event().kind(), "checkpoint");
  EXPECT_EQ(got[3].event().text(), "saved ckpt-42");
  EXPECT_EQ(got[3].event().step(), 42);
  ASSERT_TRUE(got[4].has_span());
  EXPECT_EQ(got[4].span().phase(), "forward");
  EXPECT_EQ(got[4].span().start_ns(), 100);
  EXPECT_EQ(got[4].span().end_ns(), 250);
  EXPECT_EQ(got[4].span().step(), 42);
  EXPECT_TRUE(got[5].has_heartbeat());
  ASSERT_TRUE(got[6].has_bye());
  EXPECT_EQ(got[6].bye().exit_status(), 0);
  EXPECT_EQ(got[6].bye().train_ns(), 987654321);
  EXPECT_EQ(got[6].bye().reason(), "done");
  EXPECT_EQ(collector.gaps(1), 0);
  EXPECT_TRUE(collector.takeRejected().empty());
}

TEST(TelemetryWire, FourRanksAsThreadsDeliverEveryStepInOrder) {
  constexpr int kWorld = 4;
  constexpr int kSteps = 1000;
  Collector collector("run-4", kWorld);
  std::vector<std::thread> ranks;
  std::vector<size_t> left(kWorld, 1);
  std::vector<uint64_t> dropped(kWorld, 1);
  for (int rank = 0; rank < kWorld; ++rank) {
    ranks.emplace_back([&, rank] {
      Reporter reporter(options(collector.endpoint(), "run-4", rank));
      telemetry::Step step;
      for (int i = 0; i < kSteps; ++i) {
        step.set_step(i);
        reporter.step(step);
      }
      left[rank] = reporter.close();
      dropped[rank] = reporter.dropped();
    });
  }
  auto got = collect(collector, kWorld * kSteps);
  for (auto& t : ranks) t.join();

  ASSERT_EQ(got.size(), size_t{kWorld * kSteps});
  std::map<int, int64_t> next;
  for (const auto& e : got) {
    ASSERT_TRUE(e.has_step());
    EXPECT_EQ(static_cast<int64_t>(e.seq()), next[e.rank()]) << "rank " << e.rank();
    EXPECT_EQ(e.step().step(), next[e.rank()]);
    ++next[e.rank()];
  }
  for (int rank = 0; rank < kWorld; ++rank) {
    EXPECT_EQ(next[rank], kSteps);
    EXPECT_EQ(collector.gaps(rank), 0);
    EXPECT_EQ(left[rank], 0u);
    EXPECT_EQ(dropped[rank], 0u);
  }
}

// step_batch_ms: steps wait for their batch (here longer than the test) and leave, in
// order and with their own seq and time, ahead of the next other message or at close().
TEST(TelemetryWire, BatchedStepsLeaveBeforeTheNextOtherMessageInOrder) {
  Collector collector("run-batch", 1);
  ReporterOptions o = options(collector.endpoint(), "run-batch", 0);
  o.step_batch_ms = 600'000;
  o.spool_limit = 8;
  Reporter reporter(o);
  telemetry::Step step;
  for (int i = 0; i < 3; ++i) {
    step.set_step(i);
    reporter.step(step);
  }
  EXPECT_EQ(reporter.spooled(), 3u);
  EXPECT_TRUE(collector.receive(200).empty()) << "steps left before their batch did";
  reporter.heartbeat();
  auto got = collect(collector, 4);
  ASSERT_EQ(got.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].seq(), static_cast<uint64_t>(i));
    EXPECT_EQ(got[i].step().step(), i);
    EXPECT_LE(got[i].time_ns(), got[i + 1].time_ns());
  }
  EXPECT_TRUE(got[3].has_heartbeat());
  // At most half the spool waits: the fifth step goes at once, with the four before it.
  for (int i = 3; i < 8; ++i) {
    step.set_step(i);
    reporter.step(step);
  }
  EXPECT_EQ(collect(collector, 5).size(), 5u);
  step.set_step(8);
  reporter.step(step);
  EXPECT_EQ(reporter.close(), 0u);
  got = collect(collector, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].step().step(), 8);
  EXPECT_EQ(reporter.dropped(), 0u);
  EXPECT_EQ(collector.gaps(0), 0);
}

// A sampled step's spans ride in its steps' open batch (one message after a step each
// would flush every batch); with no batch open a span leaves at once.
TEST(TelemetryWire, SpansJoinAnOpenStepBatchAndOtherwiseLeaveAtOnce) {
  Collector collector("run-spans", 1);
  ReporterOptions o = options(collector.endpoint(), "run-spans", 0);
  o.step_batch_ms = 600'000;
  o.spool_limit = 64;
  Reporter reporter(o);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the socket connects
  telemetry::Span span;
  span.set_phase("ring-rs");
  reporter.span(span);
  EXPECT_EQ(reporter.spooled(), 0u) << "no batch open: the span leaves";
  EXPECT_EQ(collect(collector, 1).size(), 1u);
  telemetry::Step step;
  for (int i = 0; i < 3; ++i) {  // the first may go at once (no step came just before it)
    step.set_step(i);
    reporter.step(step);
    reporter.span(span);
  }
  EXPECT_GE(reporter.spooled(), 4u) << "the later steps' spans wait with them";
  reporter.heartbeat();
  const auto got = collect(collector, 7);
  ASSERT_EQ(got.size(), 7u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(got[size_t(i)].has_step(), i % 2 == 0) << i;
  EXPECT_TRUE(got[6].has_heartbeat());
  EXPECT_EQ(collector.gaps(0), 0);
}

// Steps further apart than step_batch_ms leave at once: a slow step (a straggler, a large
// model) must not wait a whole step for the next message, nor be lost if the rank dies then.
TEST(TelemetryWire, StepsSlowerThanTheBatchLeaveAtOnce) {
  Collector collector("run-slow", 1);
  ReporterOptions o = options(collector.endpoint(), "run-slow", 0);
  o.step_batch_ms = 100;
  Reporter reporter(o);
  telemetry::Step step;
  for (int i = 0; i < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    step.set_step(i);
    reporter.step(step);
    EXPECT_EQ(reporter.spooled(), 0u) << "step " << i << " waits for the next message";
    const auto got = collect(collector, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].step().step(), i);
  }
}

// flush() (before an evaluation or a checkpoint) sends the steps waiting for their batch.
TEST(TelemetryWire, FlushSendsTheStepsWaitingForTheirBatch) {
  Collector collector("run-flush", 1);
  ReporterOptions o = options(collector.endpoint(), "run-flush", 0);
  o.step_batch_ms = 60000;
  Reporter reporter(o);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the socket connects
  telemetry::Step step;
  for (int i = 0; i < 3; ++i) {
    step.set_step(i);
    reporter.step(step);
  }
  EXPECT_EQ(reporter.spooled(), 3u) << "fast steps wait for their batch";
  reporter.flush();
  EXPECT_EQ(reporter.spooled(), 0u);
  const auto got = collect(collector, 3);
  ASSERT_EQ(got.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got[i].step().step(), i);
}

TEST(TelemetryWire, UnreachableCollectorNeverBlocksAndDrainsLater) {
  const std::string endpoint = freeEndpoint();
  ReporterOptions o = options(endpoint, "run-late", 0);
  o.spool_limit = 100;
  o.close_timeout_ms = 10000;
  Reporter reporter(o);

  constexpr int kSends = 10000;
  telemetry::Step step;
  const auto start = Clock::now();
  for (int i = 0; i < kSends; ++i) {
    step.set_step(i);
    reporter.step(step);
  }
  const auto elapsed = Clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(5)) << "send() blocked with no collector";
  EXPECT_EQ(reporter.spooled(), 100u);
  EXPECT_EQ(reporter.dropped(), uint64_t{kSends - 100});
  EXPECT_EQ(reporter.sent(), 0u);

  Collector collector("run-late", 1, endpoint);
  EXPECT_EQ(reporter.close(), 0u);
  auto got = collect(collector, 100);
  ASSERT_EQ(got.size(), 100u);
  EXPECT_EQ(got.front().seq(), uint64_t{kSends - 100});
  EXPECT_EQ(got.back().seq(), uint64_t{kSends - 1});
  EXPECT_EQ(got.back().step().step(), kSends - 1);
  EXPECT_EQ(collector.gaps(0), static_cast<int64_t>(reporter.dropped()));
}

TEST(TelemetryWire, CloseGivesUpAfterTimeoutWhenNobodyListens) {
  ReporterOptions o = options(freeEndpoint(), "run-x", 0);
  o.close_timeout_ms = 100;
  Reporter reporter(o);
  reporter.heartbeat();
  reporter.heartbeat();
  const auto start = Clock::now();
  EXPECT_EQ(reporter.close(), 2u);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
}

TEST(TelemetryWire, InvalidMessagesAreRejectedWithReasonsAndValidOnesArrive) {
  Collector collector("run-ok", 4);
  RawPush push(collector.endpoint());
  push.send(rawEnvelope(kWireVersion, "run-ok", 0, 0));
  const std::string garbage = "\x12\x7fgarbage!!!!";  // field 2 claims 127 bytes, has 11
  ASSERT_EQ(garbage.size(), 13u);
  push.send(garbage);
  push.send(rawEnvelope(kWireVersion, "run-ok", 0, 1));
  push.send(rawEnvelope(9, "run-ok", 0, 2));
  push.send(rawEnvelope(kWireVersion, "run-other", 0, 2));
  push.send(rawEnvelope(kWireVersion, "run-ok", 7, 0));
  push.send(rawEnvelope(kWireVersion, "run-ok", -1, 0));
  push.send(rawEnvelope(kWireVersion, "run-ok", 0, 2, /*with_body=*/false));
  push.send(rawEnvelope(kWireVersion, "run-ok", 0, 2));

  std::vector<RejectedMessage> rejected;
  auto got = collect(collector, 3, &rejected);
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (rejected.size() < 6 && Clock::now() < deadline) collect(collector, 1, &rejected);

  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].seq(), i);
  ASSERT_EQ(rejected.size(), 6u);
  EXPECT_TRUE(anyReasonContains(rejected, "undecodable 13 bytes"));
  EXPECT_TRUE(anyReasonContains(rejected, "version 9, expected 1"));
  EXPECT_TRUE(anyReasonContains(rejected, "run id 'run-other', expected 'run-ok'"));
  EXPECT_TRUE(anyReasonContains(rejected, "rank 7 outside world 4"));
  EXPECT_TRUE(anyReasonContains(rejected, "rank -1 outside world 4"));
  EXPECT_TRUE(anyReasonContains(rejected, "no body"));
  for (const auto& r : rejected) EXPECT_EQ(r.peer, "127.0.0.1") << "each names its sender";
  EXPECT_EQ(collector.gaps(0), 0);
  EXPECT_TRUE(collector.takeRejected().empty());
}

TEST(TelemetryWire, SequenceHolesCountAndDuplicatesAreAccepted) {
  Collector collector("run-seq", 2);
  RawPush push(collector.endpoint());
  for (uint64_t seq : {0, 3, 2, 4, 7}) push.send(rawEnvelope(kWireVersion, "run-seq", 1, seq));
  push.send(rawEnvelope(kWireVersion, "run-seq", 0, 5));  // rank 0 starts late: hole of 5
  auto got = collect(collector, 6);
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(collector.gaps(1), 2 + 2);
  EXPECT_EQ(collector.gaps(0), 5);
  EXPECT_EQ(collector.gaps(9), 0);
}

TEST(TelemetryWire, DisabledReporterIsANoOp) {
  Reporter reporter(options("", "run-off", 0));
  const auto start = Clock::now();
  for (int i = 0; i < 10000; ++i) reporter.heartbeat();
  reporter.hello(1, "h", 1);
  reporter.step(fullStep());
  reporter.eval(telemetry::Eval{});
  reporter.event("log", "x", 0);
  reporter.span(telemetry::Span{});
  reporter.bye(0, 0, "");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(reporter.sent(), 0u);
  EXPECT_EQ(reporter.dropped(), 0u);
  EXPECT_EQ(reporter.spooled(), 0u);
  EXPECT_EQ(reporter.close(), 0u);
}

TEST(TelemetryWire, BadBindAddressNamesEndpoint) {
  try {
    Collector collector("run", 1, "tcp://not-an-address:port");
    FAIL() << "bind should have failed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tcp://not-an-address:port"), std::string::npos)
        << e.what();
  }
}

TEST(TelemetryWire, BadReporterEndpointNamesEndpoint) {
  try {
    Reporter reporter(options("nonsense://x", "run", 0));
    FAIL() << "connect should have failed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("nonsense://x"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ranklab
