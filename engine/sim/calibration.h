// What the simulator knows of a machine: each layer's measured forward and backward time at a
// micro-batch's rows and a rank's threads, each all-reduce's latency and bandwidth per world
// size, the optimizer's and the data's cost per element, and the cores ranks share. Measured by
// `ranklab calibrate` (launch/calibrate.h), stored per machine as JSON and carried to another
// (`calibrate --export`, `plan --calibration`). Nothing here is a guessed constant: a cost not
// measured is fitted from the measured ones of its kind, and says so (costNote).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ranklab {

// One layer's passes at `rows` samples on `threads` BLAS threads in `precision`.
struct LayerTiming {
  std::string layer;  // Layer::describe(): "Linear(784, 256)"; "loss(10x1)" for the head
  std::string kind;   // "Linear", "Conv2d", ... (describe() up to its parenthesis)
  int rows = 0;
  int threads = 1;
  std::string precision;  // amp.dtype
  double macs = 0;        // multiply-adds of its forward at these rows (the fit's x)
  double forward_ns = 0, backward_ns = 0;
};

// An all-reduce of `bytes` (the whole buffer) over `world` ranks: latency + bytes * per_byte.
struct LinkFit {
  std::string algorithm;  // parallel.algorithm: ring, shm, hierarchical, ...
  int world = 2;
  double latency_ns = 0;
  double ns_per_byte = 0;
  double at(double bytes) const { return latency_ns + bytes * ns_per_byte; }
};

// A gradient codec's cost per float of the gradient it encodes, with its options.
struct CodecTiming {
  double encode_ns = 0;  // per float encoded
  double decode_ns = 0;  // per float a payload stands for
  double payload = 0;    // bytes of payload per float (measured on a gradient-like buffer)
  // Per float, what a rank does to its own gradient before any exchange: momentum
  // correction, error feedback's compensation and residual, its own encode and decode (a
  // real CompressedAllreduce on one rank). 0 in files older than it: encode + decode.
  double own_ns = 0;
};

struct Calibration {
  std::string machine;   // the host name it was measured on
  std::string cpu;       // /proc/cpuinfo's model name
  int cores = 1;         // what ranks x threads share
  std::string measured;  // ISO-8601 UTC
  std::vector<LayerTiming> layers;
  std::vector<LinkFit> links;
  std::map<std::string, double> update_ns_per_param;  // by train.optimizer, at 1 Mi parameters
  // The same at a few sizes, [parameters, ns per parameter] ascending, by train.optimizer: a
  // part whose state fits the caches updates faster than 1 Mi parameters (0.31 ns against
  // 0.48-0.71 for the quickstart's tensor slice). Absent in older files.
  std::map<std::string, std::vector<std::pair<double, double>>> update_by_size;
  double data_ns_per_byte = 0;  // a batch's copy out of the data set
  // A step's fixed cost beyond its compute and transfers, by stepOverheadKey (how many ranks
  // share a host, which model): a real data-parallel run's step period less the simulated
  // one's, in ns. Telemetry, the loader's hand-over, the heartbeat thread and, on a host with
  // more ranks than cores, the cores switching among ranks that spin while they wait: what
  // the layers' timings and the bench's back-to-back all-reduces cannot show.
  std::map<std::string, double> step_overhead_ns;
  // The parameters a rank of that reference run held (its whole model), by the same key: a
  // job of another model borrows the fixed cost in proportion to its own. Absent in older
  // files: borrowed whole.
  std::map<std::string, double> step_overhead_params;
  // By describeCompression() of the job's codec ("topk ratio 0.01 ...").
  std::map<std::string, CodecTiming> codecs;

  // The measured timing of this layer exactly, if any.
  const LayerTiming* find(const std::string& layer, int rows, int threads,
                          const std::string& precision) const;
  // The all-reduce fit for `algorithm` on `world` ranks: measured, else the nearest world's
  // scaled by the ring's 2(n-1) steps and 2(n-1)/n of the bytes.
  std::optional<LinkFit> link(const std::string& algorithm, int world) const;
  // ns per parameter of an `optimizer` update over `params` parameters: between the measured
  // sizes interpolated in log(parameters), past them the nearest; else update_ns_per_param.
  std::optional<double> updateNsPerParam(const std::string& optimizer, double params) const;
  // Adds or replaces (same layer, rows, threads, precision).
  void add(const LayerTiming& timing);
};

// Forward and backward time of a layer of `kind` at `macs` multiply-adds, fitted through the
// measured layers of that kind (time = a + b * macs, least squares; through the origin with
// one point); none when no layer of the kind was measured.
struct PassCost {
  double forward_ns = 0, backward_ns = 0;
  bool measured = false;  // exactly this layer, rows, threads and precision
};
std::optional<PassCost> fittedCost(const Calibration& calibration, const std::string& kind,
                                   double macs, int threads, const std::string& precision);

// "4 ranks a host, mlp 256,128": the key of a step's fixed cost.
std::string stepOverheadKey(int ranks_a_host, const std::string& model);

// Scales every fit of `algorithm` (latency and bytes alike) by what a real run's sync took
// against what the simulation of that run gave, kept within [0.25, 4]; returns the scale (1
// where either is not positive).
double scaleLinks(Calibration& c, const std::string& algorithm, double real_sync_s,
                  double simulated_sync_s);

std::string calibrationJson(const Calibration& calibration);
// Throws std::runtime_error naming `file` and the field that is missing or wrong.
Calibration parseCalibration(const std::string& json_text, const std::string& file);

}  // namespace ranklab
