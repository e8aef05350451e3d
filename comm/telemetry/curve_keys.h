// Per-run CURVE keys for every run's telemetry: the collector's pair, and one pair every
// rank of the run shares. The collector admits only that client key (a ZAP handler), so
// nothing but the run's own ranks gets a message in (another local account that reads the
// port in ps included), and nobody on the network reads them.
#pragma once

#include <optional>
#include <string>

namespace ranklab {

struct CurveKeyPair {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;
};

// A fresh pair from libzmq (throws std::runtime_error when it was built without CURVE).
CurveKeyPair newCurveKeyPair();

// What a rank needs to connect: the collector's public key and the ranks' own pair.
struct RankCurveKeys {
  std::string server_public;
  CurveKeyPair client;
};

// How the launcher hands the keys to the ranks: in this environment variable (which
// mpirun forwards with -x; argv would show them in ps), as the three keys run together.
inline constexpr char kTelemetryKeysVariable[] = "RANKLAB_TELEMETRY_KEYS";
std::string keysText(const RankCurveKeys& keys);
// Throws std::runtime_error naming the variable when the text is not three Z85 keys.
RankCurveKeys parseKeysText(const std::string& text);

// The collector's side: its own secret key, and the one client key it lets in.
struct CollectorCurve {
  CurveKeyPair server;
  std::string client_public;
};

// Both sides' keys for one run.
struct RunCurveKeys {
  CollectorCurve collector;
  RankCurveKeys ranks;
};
RunCurveKeys newRunCurveKeys();

}  // namespace ranklab
