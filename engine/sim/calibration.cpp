#include "engine/sim/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace ranklab {

const LayerTiming* Calibration::find(const std::string& layer, int rows, int threads,
                                     const std::string& precision) const {
  for (const LayerTiming& t : layers)
    if (t.layer == layer && t.rows == rows && t.threads == threads && t.precision == precision)
      return &t;
  return nullptr;
}

std::optional<double> Calibration::updateNsPerParam(const std::string& optimizer,
                                                    double params) const {
  const auto sizes = update_by_size.find(optimizer);
  if (sizes == update_by_size.end() || sizes->second.empty()) {
    const auto flat = update_ns_per_param.find(optimizer);
    if (flat == update_ns_per_param.end()) return std::nullopt;
    return flat->second;
  }
  const std::vector<std::pair<double, double>>& at = sizes->second;
  if (params <= at.front().first) return at.front().second;
  for (size_t i = 1; i < at.size(); ++i) {
    if (params > at[i].first) continue;
    const double w = std::log(params / at[i - 1].first) / std::log(at[i].first / at[i - 1].first);
    return at[i - 1].second + w * (at[i].second - at[i - 1].second);
  }
  return at.back().second;
}

void Calibration::add(const LayerTiming& timing) {
  for (LayerTiming& t : layers)
    if (t.layer == timing.layer && t.rows == timing.rows && t.threads == timing.threads &&
        t.precision == timing.precision) {
      t = timing;
      return;
    }
  layers.push_back(timing);
}

std::optional<LinkFit> Calibration::link(const std::string& algorithm, int world) const {
  const LinkFit* nearest = nullptr;
  for (const LinkFit& f : links) {
    if (f.algorithm != algorithm) continue;
    if (f.world == world) return f;
    if (!nearest || std::abs(f.world - world) < std::abs(nearest->world - world)) nearest = &f;
  }
  if (!nearest) return std::nullopt;
  // A ring's n - 1 steps each way: latency by 2(n-1), bytes by 2(n-1)/n.
  const double n = world, m = nearest->world;
  LinkFit scaled = *nearest;
  scaled.world = world;
  scaled.latency_ns *= (n - 1) / (m - 1);
  scaled.ns_per_byte *= ((n - 1) / n) / ((m - 1) / m);
  return scaled;
}

namespace {

// Least squares of y = a + b x (b >= 0); through the origin where x does not vary.
std::pair<double, double> fitLine(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double det = n * sxx - sx * sx;
  if (x.size() >= 2 && det > 1e-9 * sxx * n) {
    const double b = (n * sxy - sx * sy) / det;
    const double a = (sy - b * sx) / n;
    if (b > 0 && a >= 0) return {a, b};
  }
  return {0, sxx > 0 ? sxy / sxx : 0};
}

}  // namespace

std::optional<PassCost> fittedCost(const Calibration& calibration, const std::string& kind,
                                   double macs, int threads, const std::string& precision) {
  std::vector<double> x, fwd, bwd;
  for (const LayerTiming& t : calibration.layers) {
    if (t.kind != kind || t.threads != threads || t.precision != precision) continue;
    x.push_back(t.macs);
    fwd.push_back(t.forward_ns);
    bwd.push_back(t.backward_ns);
  }
  if (x.empty()) return std::nullopt;
  const auto [fa, fb] = fitLine(x, fwd);
  const auto [ba, bb] = fitLine(x, bwd);
  return PassCost{fa + fb * macs, ba + bb * macs, false};
}

namespace {

nlohmann::json codecsJson(const Calibration& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, t] : c.codecs)
    j[name] = {{"encode_ns", t.encode_ns},
               {"decode_ns", t.decode_ns},
               {"payload", t.payload},
               {"own_ns", t.own_ns}};
  return j;
}

}  // namespace

std::string stepOverheadKey(int ranks_a_host, const std::string& model) {
  return std::to_string(ranks_a_host) + " ranks a host, " + model;
}

double scaleLinks(Calibration& c, const std::string& algorithm, double real_sync_s,
                  double simulated_sync_s) {
  if (real_sync_s <= 0 || simulated_sync_s <= 0) return 1;
  const double scale = std::clamp(real_sync_s / simulated_sync_s, 0.25, 4.0);
  for (LinkFit& fit : c.links) {
    if (fit.algorithm != algorithm) continue;
    fit.latency_ns *= scale;
    fit.ns_per_byte *= scale;
  }
  return scale;
}

std::string calibrationJson(const Calibration& c) {
  nlohmann::json layers = nlohmann::json::array(), links = nlohmann::json::array();
  for (const LayerTiming& t : c.layers)
    layers.push_back({{"layer", t.layer},
                      {"kind", t.kind},
                      {"rows", t.rows},
                      {"threads", t.threads},
                      {"precision", t.precision},
                      {"macs", t.macs},
                      {"forward_ns", t.forward_ns},
                      {"backward_ns", t.backward_ns}});
  for (const LinkFit& f : c.links)
    links.push_back({{"algorithm", f.algorithm},
                     {"world", f.world},
                     {"latency_ns", f.latency_ns},
                     {"ns_per_byte", f.ns_per_byte}});
  const nlohmann::json j = {{"format", "ranklab-calibration-1"},
                            {"machine", c.machine},
                            {"cpu", c.cpu},
                            {"cores", c.cores},
                            {"measured", c.measured},
                            {"layers", layers},
                            {"links", links},
                            {"update_ns_per_param", c.update_ns_per_param},
                            {"update_by_size", c.update_by_size},
                            {"data_ns_per_byte", c.data_ns_per_byte},
                            {"step_overhead_ns", c.step_overhead_ns},
                            {"step_overhead_params", c.step_overhead_params},
                            {"codecs", codecsJson(c)}};
  return j.dump(1) + "\n";
}

namespace {

template <typename T>
T field(const nlohmann::json& j, const char* name, const std::string& where) {
  if (!j.contains(name)) throw std::runtime_error(where + ": field \"" + name + "\" is missing");
  try {
    return j.at(name).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(where + ": field \"" + name + "\" has the wrong type (" +
                             j.at(name).type_name() + ")");
  }
}

}  // namespace

Calibration parseCalibration(const std::string& json_text, const std::string& file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(file + ": not JSON (" + e.what() + ")");
  }
  if (!j.is_object() || j.value("format", "") != "ranklab-calibration-1")
    throw std::runtime_error(file +
                             ": not a ranklab calibration (\"format\" must be "
                             "\"ranklab-calibration-1\"; write one with ranklab calibrate)");
  Calibration c;
  c.machine = field<std::string>(j, "machine", file);
  c.cpu = field<std::string>(j, "cpu", file);
  c.cores = std::max(1, field<int>(j, "cores", file));
  c.measured = field<std::string>(j, "measured", file);
  for (const auto& t : field<nlohmann::json>(j, "layers", file)) {
    const std::string where = file + ": layers[" + std::to_string(c.layers.size()) + "]";
    c.layers.push_back({field<std::string>(t, "layer", where), field<std::string>(t, "kind", where),
                        field<int>(t, "rows", where), field<int>(t, "threads", where),
                        field<std::string>(t, "precision", where), field<double>(t, "macs", where),
                        field<double>(t, "forward_ns", where),
                        field<double>(t, "backward_ns", where)});
  }
  for (const auto& f : field<nlohmann::json>(j, "links", file)) {
    const std::string where = file + ": links[" + std::to_string(c.links.size()) + "]";
    c.links.push_back({field<std::string>(f, "algorithm", where), field<int>(f, "world", where),
                       field<double>(f, "latency_ns", where),
                       field<double>(f, "ns_per_byte", where)});
  }
  c.update_ns_per_param = field<std::map<std::string, double>>(j, "update_ns_per_param", file);
  c.data_ns_per_byte = field<double>(j, "data_ns_per_byte", file);
  if (j.contains("update_by_size"))
    c.update_by_size = field<std::map<std::string, std::vector<std::pair<double, double>>>>(
        j, "update_by_size", file);
  // Calibrations written before these fields existed have none: nothing measured yet.
  if (j.contains("step_overhead_ns"))
    c.step_overhead_ns = field<std::map<std::string, double>>(j, "step_overhead_ns", file);
  if (j.contains("step_overhead_params"))
    c.step_overhead_params = field<std::map<std::string, double>>(j, "step_overhead_params", file);
  const nlohmann::json codecs =
      j.contains("codecs") ? field<nlohmann::json>(j, "codecs", file) : nlohmann::json::object();
  for (const auto& [name, t] : codecs.items()) {
    const std::string where = file + ": codecs[\"" + name + "\"]";
    c.codecs[name] = {field<double>(t, "encode_ns", where), field<double>(t, "decode_ns", where),
                      field<double>(t, "payload", where),
                      t.contains("own_ns") ? field<double>(t, "own_ns", where) : 0.0};
  }
  return c;
}

}  // namespace ranklab
