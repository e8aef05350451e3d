#include "engine/sim/part_timing.h"

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/model/device_trace.h"

namespace ranklab {

std::string layerKey(const Layer& layer) {
  size_t params = 0;
  for (const ParamTensor& t : layer.paramTensors()) params += t.size;
  return layer.describe() + " [" + std::to_string(params) + " params, out " +
         layer.outputShape().str() + "]";
}

std::string lossKey(const Network& part) {
  return "loss(" + std::to_string(part.classes()) + " classes x " +
         std::to_string(part.positions()) + " positions)";
}

double layerMacs(const Layer& layer, int rows) {
  const Shape out = layer.outputShape();
  const double positions = static_cast<double>(out.height) * out.width;
  const double per = layer.macsPerPosition() > 0 ? static_cast<double>(layer.macsPerPosition())
                                                 : static_cast<double>(out.channels);
  return per * positions * rows;
}

std::string layerKind(const std::string& key) {
  return key.substr(0, std::min(key.find('('), key.find(' ')));
}

namespace {

struct PassSamples {
  std::vector<double> forward, backward;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// One training pass of the part over x: the head's where it has one, else a stage's.
void runPasses(Network& part, bool last_stage, const std::vector<float>& x,
               const std::vector<uint8_t>& labels, std::vector<float>& dx, int rows) {
  part.zeroGrads();
  if (last_stage) {
    part.forward(x.data(), labels.data(), rows);
    part.lossGradient(labels.data(), rows);
  } else {
    part.forwardActivations(x.data(), rows);
    std::fill_n(part.outputGradient(), static_cast<size_t>(rows) * part.outputShape().size(),
                1e-3f);
  }
  // Every stage but the first sends its input's gradient back (pipeline_schedule.cpp): its
  // run computes one, and so does its timing; the first stage's has nowhere to go.
  part.backwardFrom(x.data(), part.firstLayer() == 0 ? nullptr : dx.data(), rows);
}

}  // namespace

void timePart(Network& part, bool last_stage, int rows, int labels_per_sample, int threads,
              const std::string& precision, Calibration& out, int repeats) {
  const size_t in = part.inputShape().size();
  std::mt19937 rng(7);
  // Inputs that every model reads as it reads data: small floats, or a text's byte codes.
  std::vector<float> x(static_cast<size_t>(rows) * in);
  const bool tokens = labels_per_sample > 1;  // a sequence model reads byte ids
  for (float& v : x) v = static_cast<float>(rng() % 256) * (tokens ? 1.f : 1 / 256.f);
  std::vector<uint8_t> labels(static_cast<size_t>(rows) * labels_per_sample);
  for (uint8_t& l : labels)
    l = static_cast<uint8_t>(rng() % std::max(1, std::min(256, part.classes())));
  std::vector<float> dx(x.size());
  DeviceTrace trace(cpuDevice());
  std::map<int, PassSamples> samples;   // by layer index in the part; -1: the loss head
  for (int r = -2; r < repeats; ++r) {  // two warm-ups: buffers sized, caches filled
    part.traceDevice(&trace);
    runPasses(part, last_stage, x, labels, dx, rows);
    part.traceDevice(nullptr);
    const DeviceSpans spans = trace.take();
    if (r < 0) continue;
    std::map<int, std::pair<double, double>> step;
    bool loss_seen = false;
    for (const DeviceSpan& s : spans) {
      const std::string kind = s.kind;
      const double ns = static_cast<double>(s.end_ns - s.begin_ns);
      if (kind == "dev-fwd") step[s.layer - static_cast<int>(part.firstLayer())].first += ns;
      if (kind == "dev-bwd") step[s.layer - static_cast<int>(part.firstLayer())].second += ns;
      if (kind == "dev-loss") (loss_seen ? step[-1].second : step[-1].first) += ns;
      if (kind == "dev-loss") loss_seen = true;
    }
    for (const auto& [layer, times] : step) {
      samples[layer].forward.push_back(times.first);
      samples[layer].backward.push_back(times.second);
    }
  }
  // A layer the trace never saw runs inside another (a ReLU its Linear absorbed) or only
  // talks to peers (f, g): nothing of its own to time.
  for (size_t l = 0; l < part.layers().size(); ++l)
    if (!samples.count(static_cast<int>(l))) samples[static_cast<int>(l)] = {{0.0}, {0.0}};
  for (const auto& [index, s] : samples) {
    LayerTiming t;
    const bool loss = index < 0;
    t.layer = loss ? lossKey(part) : layerKey(*part.layers()[index]);
    t.kind = loss ? "loss" : layerKind(t.layer);
    t.rows = rows;
    t.threads = threads;
    t.precision = precision;
    t.macs = loss ? static_cast<double>(rows) * part.positions() * part.classes()
                  : layerMacs(*part.layers()[index], rows);
    t.forward_ns = median(s.forward);
    t.backward_ns = median(s.backward);
    out.add(t);
  }
}

}  // namespace ranklab
