#include "comm/telemetry/curve_keys.h"

#include <stdexcept>

#include <zmq.h>

namespace ranklab {
namespace {

constexpr size_t kKeyLength = 40;  // Z85 of 32 bytes

}  // namespace

CurveKeyPair newCurveKeyPair() {
  char public_key[kKeyLength + 1] = {}, secret_key[kKeyLength + 1] = {};
  if (!zmq_has("curve") || zmq_curve_keypair(public_key, secret_key) != 0)
    throw std::runtime_error(
        "telemetry: this libzmq has no CURVE security, which every run's telemetry needs");
  return {public_key, secret_key};
}

std::string keysText(const RankCurveKeys& keys) {
  return keys.server_public + keys.client.public_key + keys.client.secret_key;
}

RankCurveKeys parseKeysText(const std::string& text) {
  if (text.size() != 3 * kKeyLength)
    throw std::runtime_error(std::string(kTelemetryKeysVariable) + ": expected " +
                             std::to_string(3 * kKeyLength) + " characters (three Z85 keys), got " +
                             std::to_string(text.size()));
  return {text.substr(0, kKeyLength),
          {text.substr(kKeyLength, kKeyLength), text.substr(2 * kKeyLength)}};
}

RunCurveKeys newRunCurveKeys() {
  const CurveKeyPair server = newCurveKeyPair(), client = newCurveKeyPair();
  return {{server, client.public_key}, {server.public_key, client}};
}

}  // namespace ranklab
