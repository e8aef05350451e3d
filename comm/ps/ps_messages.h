// The parameter-server wire protocol. A request is a PsRequest (tag kPsRequest), followed
// for init and push by `bytes` bytes of payload (tag kPsPayload): `count` floats, or with
// a codec the codec's payload for `count` gradients (shard_codecs.h). A reply is a PsReply
// (tag kPsReply) followed by `bytes` bytes (tag kPsParams): the shard's `count` parameters,
// or with a codec the pull codec's payload of their change since the worker's last reply.
// Both sides run the same binary, so the structs go over the wire as they are.
#pragma once

#include <cstdint>

namespace ranklab {

enum class PsOp : int32_t {
  kInit = 1,  // worker 0 seeds the shard with the initial model
  kPush = 2,  // gradients; the reply carries the parameters after the server applied them
  kPull = 3,  // parameters as they are now
  kStop = 4,  // this worker is done; no reply
};

struct PsRequest {
  PsOp op = PsOp::kPull;
  int32_t worker = 0;  // worker index, 0..W-1
  int64_t count = 0;   // floats the payload stands for (0 for pull and stop)
  int64_t bytes = 0;   // bytes of the payload that follows
  int64_t total = 0;   // init: parameters in the whole model
  double lr = 0;       // push: the learning rate of the worker's step
};

enum class PsBody : int32_t {
  kParams = 0,  // the shard's count parameters as f32
  kDelta = 1,   // the pull codec's payload of (parameters - the worker's copy): add it
};

struct PsReply {
  int64_t version = 0;    // updates the shard had applied when the reply left
  int64_t staleness = 0;  // push: updates applied between the worker's last reply and this push
  int64_t held_ns = 0;    // time the server held the reply back (sync round, staleness bound)
  int64_t count = 0;      // parameters the body stands for
  int64_t bytes = 0;      // bytes of the body that follows
  PsBody body = PsBody::kParams;
};

}  // namespace ranklab
