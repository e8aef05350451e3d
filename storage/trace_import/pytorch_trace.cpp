#include "storage/trace_import/pytorch_trace.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_map>

#include "storage/records.h"

namespace ranklab {
namespace {

using json = nlohmann::json;

constexpr int64_t kMaxRanks = int64_t(1) << 20;  // a rank, a world, a pid beyond it is clamped

bool startsWith(const std::string& text, const char* prefix) {
  return text.rfind(prefix, 0) == 0;
}

// "AllReduce", "_allgather_base_", "reduce_scatter" -> "allreduce", "allgatherbase", ...
std::string squashed(const std::string& text) {
  std::string out;
  for (const char c : text)
    if (c != '_' && c != ':') out += char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The collective an op's name speaks of, as an index into kCollectiveSpanKinds; -1 for none.
// Longer names first: "reducescatter" before "reduce", "allgather" before "gather".
int collectiveOp(const std::string& name) {
  const std::string s = squashed(name);
  static const std::pair<const char*, int> kSpellings[] = {
      {"allreduce", 0}, {"allgather", 1}, {"reducescatter", 2}, {"broadcast", 3},
      {"alltoall", 5},  {"barrier", 6},   {"sendrecv", 7},      {"send", 7},
      {"recv", 8},      {"reduce", 4},    {"gather", 9},        {"scatter", 10}};
  for (const auto& [spelling, op] : kSpellings)
    if (s.find(spelling) != std::string::npos) return op;
  return -1;
}

// Bytes per element of a PyTorch dtype as the profiler names it ("Float", "BFloat16").
int64_t dtypeBytes(const std::string& dtype) {
  const std::string d = squashed(dtype);
  if (d == "double" || d == "long" || d == "complexfloat") return 8;
  if (d == "half" || d == "bfloat16" || d == "short") return 2;
  if (d == "byte" || d == "char" || d == "bool" || d.find("float8") == 0) return 1;
  return 4;  // Float, Int and what the profiler may add
}

// Reads the events of one trace, one SAX callback at a time. Depth counts open containers;
// events are the objects in the array at events_depth_ (1 in the legacy bare array, 2 under
// the Kineto object's "traceEvents").
class TraceReader : public json::json_sax_t {
 public:
  TraceReader(RankTrace& out, std::FILE* file, const std::function<void(int64_t)>& progress)
      : out_(out), file_(file), progress_(progress) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t v) override { return number(double(v), std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override {
    return number(double(v), std::to_string(v));
  }
  bool number_float(number_float_t v, const string_t& s) override { return number(v, s); }
  bool string(string_t& v) override { return scalar(v, std::nullopt); }
  bool binary(binary_t&) override { return true; }

  bool start_object(std::size_t) override {
    ++depth_;
    if (depth_ == 1) top_is_object_ = true;
    if (events_depth_ > 0 && depth_ == events_depth_ + 1) event_ = Pending{};
    if (depth_ == 2 && top_is_object_ && key_ == "distributedInfo") in_distributed_ = true;
    if (depth_ == 2 && top_is_object_ && key_ == "otherData") in_other_data_ = true;
    if (event_ && depth_ == events_depth_ + 2 && key_ == "args") in_args_ = true;
    return true;
  }
  bool end_object() override {
    if (event_ && depth_ == events_depth_ + 1) finishEvent();
    if (depth_ == events_depth_ + 2) in_args_ = false;
    if (depth_ == 2) in_distributed_ = in_other_data_ = false;
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    ++depth_;
    if (events_depth_ == 0 && (depth_ == 1 || (depth_ == 2 && key_ == "traceEvents")))
      events_depth_ = depth_;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& e) override {
    throw std::runtime_error(out_.path + ": not valid JSON at byte " + std::to_string(position) +
                             " (near \"" + last_token.substr(0, 40) + "\"): " + e.what());
  }

  bool sawEvents() const { return events_depth_ > 0; }

 private:
  struct Pending {
    std::string name, ph, cat, pid, tid, dtype, collective, arg_name;
    std::optional<double> ts, dur;
    int64_t nelems = -1;
    std::map<std::string, double> numbers;  // a ranklab export's args
  };

  bool number(double v, const std::string& text) { return scalar(text, v); }

  // A string or number value under the current key.
  bool scalar(const std::string& text, std::optional<double> v) {
    if (in_distributed_ && depth_ == 2) {
      if (key_ == "rank") out_.rank = int(distributedNumber(text, v, 0));
      if (key_ == "world_size") out_.world = int(distributedNumber(text, v, 1));
      if (key_ == "backend") out_.backend = text;
    } else if (in_other_data_ && depth_ == 2) {
      out_.other_data[key_] = text;
    } else if (event_ && in_args_ && depth_ == events_depth_ + 2 && out_.isRanklabExport()) {
      if (v) event_->numbers[key_] = *v;
      if (key_ == "name") event_->arg_name = text;
    } else if (event_ && depth_ == events_depth_ + 1) {
      eventField(text, v);
    } else if (event_ && in_args_ && depth_ == events_depth_ + 2) {
      if (key_ == "In msg nelems" && v) event_->nelems = clampedInteger(*v, 0, int64_t(1) << 40);
      if (key_ == "dtype") event_->dtype = text;
      if (key_ == "Collective name") event_->collective = text;
    }
    return true;
  }

  // distributedInfo's rank or world size: an integer in [lowest, 2^20), else refused (a
  // clamped -5 would become rank 0 and meet the real rank 0 as "both say rank 0").
  int64_t distributedNumber(const std::string& text, std::optional<double> v,
                            int64_t lowest) const {
    if (!v || !(*v >= double(lowest) && *v < double(kMaxRanks)) || *v != std::floor(*v))
      throw std::runtime_error(out_.path + ": distributedInfo." + key_ + " is " +
                               (v ? text : "\"" + text.substr(0, 40) + "\"") +
                               " (allowed: an integer from " + std::to_string(lowest) + " to " +
                               std::to_string(kMaxRanks - 1) + ")");
    return int64_t(*v);
  }

  // N of ProfilerStep#N: digits only (a garbled number is refused, never read as 0).
  int32_t stepNumber(const std::string& name) {
    const std::string digits = name.substr(13);
    const bool number = !digits.empty() && digits.size() <= 10 &&
                        digits.find_first_not_of("0123456789") == std::string::npos &&
                        std::stoll(digits) <= INT32_MAX;
    if (!number)
      throw std::runtime_error(out_.path + ": event \"" + name.substr(0, 60) + "\" near byte " +
                               std::to_string(std::ftell(file_)) +
                               ": not a step number (ProfilerStep#N, N from 0 to 2^31-1)");
    return int32_t(std::stoll(digits));
  }

  void eventField(const std::string& text, std::optional<double> v) {
    Pending& e = *event_;
    if (key_ == "name")
      e.name = text;
    else if (key_ == "ph")
      e.ph = text;
    else if (key_ == "cat")
      e.cat = text;
    else if (key_ == "ts")
      e.ts = v;
    else if (key_ == "dur")
      e.dur = v;
    else if (key_ == "pid")
      e.pid = text;
    else if (key_ == "tid")
      e.tid = text;
  }

  int32_t intern(std::unordered_map<std::string, int32_t>& index, std::vector<std::string>& list,
                 const std::string& text) {
    const auto [it, added] = index.try_emplace(text, int32_t(list.size()));
    if (added) list.push_back(text);
    return it->second;
  }

  void finishEvent() {
    Pending e = std::move(*event_);
    event_.reset();
    if ((++seen_ & 0xffff) == 0 && progress_) progress_(std::ftell(file_));
    if (out_.isRanklabExport()) return keepExported(std::move(e));
    if (e.ph != "X" || !e.ts) {
      ++out_.ignored;
      return;
    }
    TraceEvent t;
    t.start_ns = nanoseconds(*e.ts, e.name, "ts");
    t.end_ns = t.start_ns + nanoseconds(e.dur.value_or(0), e.name, "dur");
    const std::string& op_name = e.collective.empty() ? e.name : e.collective;
    t.kind = classifyTraceEvent(e.name, e.cat, &t.source, &t.op);
    if (t.kind == TraceClass::kCollective && !e.collective.empty() && collectiveOp(op_name) >= 0)
      t.op = uint8_t(collectiveOp(op_name));
    if (t.kind == TraceClass::kStep) t.step = stepNumber(e.name);
    if (e.nelems >= 0) t.bytes = e.nelems * dtypeBytes(e.dtype);
    if (t.kind == TraceClass::kCollective && out_.backend.empty() &&
        t.source == CollectiveSource::kBackendOp)
      out_.backend = e.name.substr(0, e.name.find(':'));
    out_.saw_ddp = out_.saw_ddp || e.name == "DistributedDataParallel.forward";
    out_.saw_fsdp = out_.saw_fsdp || startsWith(e.name, "FullyShardedDataParallel");
    t.name = intern(name_index_, out_.names, e.name);
    t.thread = intern(thread_index_, out_.threads, e.pid + "/" + e.tid);
    out_.events.push_back(t);
  }

  // The trace's microseconds as nanoseconds (ranklab's exports keep every nanosecond in 3
  // decimals). A time past 2^61 ns (73 years), a duration past 2^50 ns (13 days) or either
  // negative is refused: the sums and differences of clocks made of them stay inside int64.
  int64_t nanoseconds(double micros, const std::string& event, const char* field) const {
    const bool duration = std::string(field) == "dur";
    const double max_ns = double(int64_t(1) << (duration ? 50 : 61));
    const double ns = micros * 1000.0;
    if (!(ns >= 0 && ns < max_ns))
      throw std::runtime_error(out_.path + ": event \"" + event.substr(0, 60) + "\" near byte " +
                               std::to_string(std::ftell(file_)) + " has " + field + " " +
                               std::to_string(micros) + " us (allowed: 0 to 2^" +
                               (duration ? "50" : "61") + " ns)");
    return std::llround(ns);
  }

  // Made into rows at once (ExportRows): an event that makes none is only counted.
  void keepExported(Pending e) {
    ExportEvent x;
    x.ph = e.ph.empty() ? '?' : e.ph[0];
    x.pid = int(integerIn(e.pid, -kMaxRanks, kMaxRanks));
    x.tid = int(integerIn(e.tid, -kMaxRanks, kMaxRanks));
    x.name = std::move(e.name);
    x.cat = std::move(e.cat);
    x.start_ns = nanoseconds(e.ts.value_or(0), x.name, "ts");
    x.dur_ns = nanoseconds(e.dur.value_or(0), x.name, "dur");
    x.args = std::move(e.numbers);
    x.text = std::move(e.arg_name);
    const bool makes_rows = x.ph == 'X' || x.ph == 'M' || x.ph == 'C';
    if (makes_rows && x.pid < 1)  // pid r + 1 is rank r: a pid below 1 would be a negative rank
      throw std::runtime_error(out_.path + ": event \"" + x.name.substr(0, 60) + "\" near byte " +
                               std::to_string(std::ftell(file_)) + " has pid " +
                               std::to_string(x.pid) +
                               " (a ranklab export writes rank r as pid r + 1, from 1)");
    if (!out_.export_rows.add(x)) ++out_.ignored;
  }

  RankTrace& out_;
  std::FILE* file_;
  const std::function<void(int64_t)>& progress_;
  int depth_ = 0;
  int events_depth_ = 0;
  bool top_is_object_ = false;
  bool in_distributed_ = false;
  bool in_other_data_ = false;
  bool in_args_ = false;
  std::string key_;
  std::optional<Pending> event_;
  int64_t seen_ = 0;
  std::unordered_map<std::string, int32_t> name_index_, thread_index_;
};

// The file's bytes one after another, read a MiB at a time (nlohmann's FILE* input reads
// each byte with getc: a fifth of the parse). Copies share the reader, as an input
// iterator's may; a default-made one is the end.
class ChunkedBytes {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  ChunkedBytes() = default;
  explicit ChunkedBytes(std::FILE* file) : chunks_(std::make_shared<Chunks>(file)) {
    if (!chunks_->fill()) chunks_.reset();
  }
  reference operator*() const { return chunks_->data[chunks_->at]; }
  ChunkedBytes& operator++() {
    if (++chunks_->at == chunks_->size && !chunks_->fill()) chunks_.reset();
    return *this;
  }
  bool operator==(const ChunkedBytes& other) const { return chunks_ == other.chunks_; }
  bool operator!=(const ChunkedBytes& other) const { return !(*this == other); }

 private:
  struct Chunks {
    explicit Chunks(std::FILE* f) : file(f) {}
    bool fill() {
      size = std::fread(data.data(), 1, data.size(), file);
      at = 0;
      return size > 0;
    }
    std::FILE* file;
    std::vector<char> data = std::vector<char>(size_t(1) << 20);
    size_t size = 0, at = 0;
  };
  std::shared_ptr<Chunks> chunks_;
};

// Two ProfilerStep#N of one N would be merged into one step row: refused, naming it.
void refuseRepeatedSteps(std::vector<int32_t> steps, const std::string& name) {
  std::sort(steps.begin(), steps.end());
  const auto twin = std::adjacent_find(steps.begin(), steps.end());
  if (twin != steps.end())
    throw std::runtime_error(name + ": event \"ProfilerStep#" + std::to_string(*twin) +
                             "\" appears " +
                             std::to_string(std::count(steps.begin(), steps.end(), *twin)) +
                             " times (each ProfilerStep#N is one step: not merged)");
}

}  // namespace

TraceClass classifyTraceEvent(const std::string& name, const std::string& category,
                              CollectiveSource* source, uint8_t* op) {
  *source = CollectiveSource::kNone;
  if (startsWith(name, "ProfilerStep#")) return TraceClass::kStep;
  if (startsWith(name, "enumerate(DataLoader)")) return TraceClass::kData;
  if (startsWith(name, "autograd::engine::evaluate_function")) return TraceClass::kBackward;
  if (startsWith(name, "Optimizer.step#") || startsWith(name, "Optimizer.zero_grad#"))
    return TraceClass::kOptimizer;
  const bool kernel = category == "kernel";
  const bool nccl_kernel = kernel && squashed(name).find("nccl") != std::string::npos;
  const bool backend_op = startsWith(name, "gloo:") || startsWith(name, "nccl:") ||
                          startsWith(name, "mpi:") || startsWith(name, "ucc:");
  const bool param_comms = name == "record_param_comms";
  const bool c10d = startsWith(name, "c10d::");
  if (nccl_kernel || backend_op || param_comms || c10d) {
    const int found = collectiveOp(name);
    if (found >= 0 || param_comms) {
      *op = uint8_t(std::max(found, 0));
      *source = nccl_kernel   ? CollectiveSource::kNcclKernel
                : backend_op  ? CollectiveSource::kBackendOp
                : param_comms ? CollectiveSource::kParamComms
                              : CollectiveSource::kC10dOp;
      return TraceClass::kCollective;
    }
  }
  if (kernel) return TraceClass::kKernel;
  if (category == "gpu_memcpy" || category == "gpu_memset") return TraceClass::kMemcpy;
  return TraceClass::kOther;
}

RankTrace readPytorchTrace(const std::string& path,
                           const std::function<void(int64_t bytes)>& progress) {
  // Never blocks on a FIFO nor reads a device; a read error or the limit reached mid-read is
  // said as itself, not as the JSON it cut short.
  const BoundedStream file(path, kTraceFileLimit);
  try {
    RankTrace trace = readPytorchTrace(file.get(), path, progress);
    file.throwIfFailed();
    return trace;
  } catch (const std::exception&) {
    file.throwIfFailed();
    throw;
  }
}

RankTrace readPytorchTrace(std::FILE* file, const std::string& name,
                           const std::function<void(int64_t bytes)>& progress) {
  RankTrace trace;
  trace.path = name;
  TraceReader reader(trace, file, progress);
  json::sax_parse(ChunkedBytes(file), ChunkedBytes(), &reader);
  if (!reader.sawEvents())
    throw std::runtime_error(name +
                             ": JSON, but not a Chrome trace (no array of events, and no "
                             "\"traceEvents\"): another tool's file?");
  if (trace.isRanklabExport()) return trace;
  std::vector<int32_t> steps;
  for (const TraceEvent& e : trace.events)
    if (e.kind == TraceClass::kStep) steps.push_back(e.step);
  if (steps.empty())
    throw std::runtime_error(
        name + ": a trace without ProfilerStep#N events (" + std::to_string(trace.events.size()) +
        " timed events): profile with a schedule and call prof.step() once per training step");
  refuseRepeatedSteps(std::move(steps), name);
  return trace;
}

}  // namespace ranklab
