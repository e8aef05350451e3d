// Launcher side of telemetry: PULL on loopback, decode, validate, count sequence holes.
#include "comm/telemetry/collector.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <utility>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "comm/telemetry/open_files.h"

namespace ranklab {
namespace {

// Queue deep enough that four ranks at full speed rarely push back into their spools.
constexpr int kReceiveHighWaterMark = 100000;
// A real envelope is well under a kilobyte; anything this big is not telemetry.
constexpr int64_t kMaxMessageBytes = 1 << 20;

std::runtime_error zmqFailure(const std::string& operation, const std::string& endpoint,
                              const zmq::error_t& e) {
  return std::runtime_error("telemetry collector: " + operation + " " + endpoint + ": " + e.what());
}

// True when a message (or a ZAP request, on `zap`) is waiting; false on timeout or when a
// signal interrupted the wait.
bool waitReadable(zmq::socket_t& socket, zmq::socket_t* zap, int timeout_ms,
                  const std::string& endpoint) {
  zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0},
                             {zap ? zap->handle() : nullptr, 0, ZMQ_POLLIN, 0}};
  try {
    return zmq::poll(items, zap ? 2 : 1, std::chrono::milliseconds(timeout_ms)) > 0;
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return false;  // e.g. SIGCHLD from mpirun: the caller polls again
    throw zmqFailure("poll", endpoint, e);
  }
}

// Takes one queued message without waiting; false when none is queued.
bool tryReceive(zmq::socket_t& socket, zmq::message_t& message, const std::string& endpoint) {
  try {
    return socket.recv(message, zmq::recv_flags::dontwait).has_value();
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return false;
    throw zmqFailure("receive", endpoint, e);
  }
}

// Who sent a message: libzmq's "Peer-Address" of its TCP connection, "" if it has none.
std::string peerAddress(zmq::message_t& message) {
  try {
    const char* address = message.gets("Peer-Address");
    return address ? address : "";
  } catch (const zmq::error_t&) {
    return "";
  }
}

// Why a decoded envelope cannot be accepted, or "" when it can.
std::string whyInvalid(const telemetry::Envelope& envelope, const std::string& run_id, int world) {
  if (envelope.version() != kWireVersion)
    return "version " + std::to_string(envelope.version()) + ", expected " +
           std::to_string(kWireVersion);
  if (envelope.run_id() != run_id)
    return "run id '" + envelope.run_id() + "', expected '" + run_id + "'";
  if (envelope.rank() < 0 || envelope.rank() >= world)
    return "rank " + std::to_string(envelope.rank()) + " outside world " + std::to_string(world);
  if (envelope.body_case() == telemetry::Envelope::BODY_NOT_SET)
    return "no body (seq " + std::to_string(envelope.seq()) + ")";
  return "";
}

// Adds a hole to `gaps` when seq jumps past the expected one; older seqs are kept as is.
void trackSequence(uint64_t seq, int64_t& next_seq, int64_t& gaps) {
  const int64_t expected = std::max<int64_t>(next_seq, 0);  // -1: nothing seen, expect 0
  const auto got = static_cast<int64_t>(seq);
  if (got < expected) return;  // duplicate or reordered: accepted, expectation unchanged
  gaps += got - expected;
  next_seq = got + 1;
}

}  // namespace

DecodedMessage decodeMessage(const void* bytes, size_t size, const std::string& run_id, int world) {
  DecodedMessage decoded;
  telemetry::Envelope envelope;
  if (size > static_cast<size_t>(INT32_MAX) ||
      !envelope.ParseFromArray(bytes, static_cast<int>(size))) {
    decoded.rejected = {-1, "undecodable " + std::to_string(size) + " bytes", ""};
    return decoded;
  }
  if (std::string reason = whyInvalid(envelope, run_id, world); !reason.empty()) {
    decoded.rejected = {envelope.rank(), std::move(reason), ""};
    return decoded;
  }
  decoded.envelope = std::move(envelope);
  return decoded;
}

struct Collector::Socket {
  zmq::context_t context{1};
  zmq::socket_t pull{context, zmq::socket_type::pull};
  std::optional<zmq::socket_t> zap;      // CURVE: libzmq asks here whether a client may connect
  std::optional<zmq::socket_t> monitor;  // CURVE: connections that failed the handshake
  std::string allowed_client;            // the run's client public key, 32 bytes
};

namespace {

constexpr char kMonitorAddress[] = "inproc://ranklab-telemetry-handshakes";

}  // namespace

// Encrypted PULL, and the ZAP handler (RFC 27) bound before any client can connect.
void Collector::secure(const CollectorCurve& curve) {
  Socket& socket = *socket_;
  socket.allowed_client.resize(32);
  if (!zmq_z85_decode(reinterpret_cast<uint8_t*>(socket.allowed_client.data()),
                      curve.client_public.c_str()))
    throw std::runtime_error("telemetry collector: the client key is not Z85");
  socket.zap.emplace(socket.context, zmq::socket_type::rep);
  socket.zap->set(zmq::sockopt::linger, 0);
  socket.zap->bind("inproc://zeromq.zap.01");
  socket.pull.set(zmq::sockopt::curve_server, true);
  socket.pull.set(zmq::sockopt::curve_secretkey, curve.server.secret_key);
  socket.pull.set(zmq::sockopt::zap_domain, "ranklab");
  // A client without the server's key (a plain forged PUSH) never reaches ZAP: count it here.
  // Failed authentication is left out: ZAP has listed that peer by its address.
  if (zmq_socket_monitor(
          socket.pull.handle(), kMonitorAddress,
          ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) != 0)
    throw zmq::error_t();
  socket.monitor.emplace(socket.context, zmq::socket_type::pair);
  socket.monitor->set(zmq::sockopt::linger, 0);
  socket.monitor->connect(kMonitorAddress);
}

// Each connection dropped at the CURVE handshake since the last call, as a rejection.
void Collector::countFailedHandshakes() {
  if (!socket_->monitor) return;
  std::vector<zmq::message_t> frames;
  while (zmq::recv_multipart(*socket_->monitor, std::back_inserter(frames),
                             zmq::recv_flags::dontwait)) {
    frames.clear();
    rejected_.push_back(
        {-1, "a connection without this run's CURVE keys was dropped at the handshake", ""});
  }
}

Collector::Collector(std::string run_id, int world, const std::string& bind,
                     const std::optional<CollectorCurve>& curve)
    : run_id_(std::move(run_id)),
      world_(world),
      socket_(std::make_unique<Socket>()),
      next_seq_(std::max(world, 0), -1),
      gaps_(std::max(world, 0), 0) {
  if (world_ < 1)
    throw std::runtime_error("telemetry collector: world " + std::to_string(world_) +
                             " must be at least 1");
  allowOpenFiles(size_t(world_) + 256);  // a connection per rank
  try {
    socket_->pull.set(zmq::sockopt::linger, 0);  // unread telemetry is worthless once we stop
    socket_->pull.set(zmq::sockopt::rcvhwm, kReceiveHighWaterMark);
    socket_->pull.set(zmq::sockopt::maxmsgsize, kMaxMessageBytes);
    if (curve) secure(*curve);
    socket_->pull.bind(bind);
    endpoint_ = socket_->pull.get(zmq::sockopt::last_endpoint);  // resolves a wildcard port
  } catch (const zmq::error_t& e) {
    throw zmqFailure("bind", bind, e);
  }
}

Collector::~Collector() = default;

std::vector<telemetry::Envelope> Collector::receive(int timeout_ms, size_t max_messages) {
  std::vector<telemetry::Envelope> valid;
  zmq::socket_t* zap = socket_->zap ? &*socket_->zap : nullptr;
  const bool readable = max_messages > 0 && waitReadable(socket_->pull, zap, timeout_ms, endpoint_);
  countFailedHandshakes();
  if (!readable) return valid;
  answerSecurityRequests();
  zmq::message_t message;
  // Bounded by max_messages in total, so a flood of bad messages cannot pin the caller.
  for (size_t taken = 0; taken < max_messages; ++taken) {
    if (!tryReceive(socket_->pull, message, endpoint_)) break;
    DecodedMessage decoded = decodeMessage(message.data(), message.size(), run_id_, world_);
    if (!decoded.envelope) {
      decoded.rejected.peer = peerAddress(message);
      rejected_.push_back(std::move(decoded.rejected));
      continue;
    }
    const telemetry::Envelope& envelope = *decoded.envelope;
    trackSequence(envelope.seq(), next_seq_[envelope.rank()], gaps_[envelope.rank()]);
    valid.push_back(std::move(*decoded.envelope));
  }
  return valid;
}

// Each waiting ZAP request: 200 for a CURVE client with the run's key, 400 for any other.
void Collector::answerSecurityRequests() {
  if (!socket_->zap) return;
  zmq::socket_t& zap = *socket_->zap;
  std::vector<zmq::message_t> frames;
  while (zmq::recv_multipart(zap, std::back_inserter(frames), zmq::recv_flags::dontwait)) {
    // version, request id, domain, address, routing id, mechanism, client key
    const bool allowed = frames.size() == 7 && frames[5].to_string_view() == "CURVE" &&
                         frames[6].to_string_view() == socket_->allowed_client;
    // Refused peers retry every 100 ms or so: each address is listed once, not each try.
    const std::string address = frames.size() > 3 ? frames[3].to_string() : "?";
    if (!allowed && refused_addresses_.insert(address).second)
      rejected_.push_back({-1,
                           "a connection from " + address +
                               " without this run's CURVE key was refused (listed once)",
                           address});
    std::array<zmq::const_buffer, 6> reply = {
        zmq::str_buffer("1.0"),
        zmq::buffer(frames.size() > 1 ? frames[1].data() : nullptr,
                    frames.size() > 1 ? frames[1].size() : 0),
        allowed ? zmq::str_buffer("200") : zmq::str_buffer("400"),
        allowed ? zmq::str_buffer("OK") : zmq::str_buffer("not this run's key"),
        zmq::str_buffer(""),
        zmq::str_buffer("")};
    zmq::send_multipart(zap, reply);
    frames.clear();
  }
}

std::vector<RejectedMessage> Collector::takeRejected() {
  return std::exchange(rejected_, {});
}

void Collector::continueFrom(int rank, int64_t last_seq, int64_t gaps) {
  if (rank < 0 || rank >= world_) return;
  next_seq_[static_cast<size_t>(rank)] = last_seq + 1;
  gaps_[static_cast<size_t>(rank)] = gaps;
}

int64_t Collector::gaps(int rank) const {
  if (rank < 0 || rank >= world_) return 0;
  return gaps_[rank];
}

}  // namespace ranklab
