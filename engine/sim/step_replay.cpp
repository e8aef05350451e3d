#include "engine/sim/step_replay.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace ranklab {

namespace {

constexpr int kGroupKinds = static_cast<int>(GroupKind::kCount);
constexpr int kWait = 4, kComm = 5;  // kStepPhaseNames

uint64_t messageKey(int sender, int tag) {
  return (static_cast<uint64_t>(sender) << 22) | static_cast<uint64_t>(tag);
}

void countBytes(SimStep& out, const SimAction& a) {
  out.bytes_tx += a.bytes;
  out.bytes_rx += a.bytes;
  out.bytes_raw += a.raw_bytes >= 0 ? a.raw_bytes : a.bytes;
  if (a.bytes_class == ByteClass::kTensor) out.bytes_tensor += a.bytes;
  if (a.bytes_class == ByteClass::kPipeline) out.bytes_pipeline += a.bytes;
}

// A pass's pieces (split by its slices' sums) as one span, from its first start to its last end.
void recordPass(std::vector<SimPass>& passes, int pass, double start, double end) {
  const bool forward = pass > 0;
  const int micro = std::abs(pass) - 1;
  if (!passes.empty() && passes.back().forward == forward && passes.back().micro == micro) {
    passes.back().end_ns = end;
    return;
  }
  passes.push_back({forward, micro, start, end});
}

}  // namespace

StepReplay::StepReplay(const StepModel& model)
    : model_(model),
      next_(model.ranks()),
      joined_(model.ranks(), std::vector<int64_t>(kGroupKinds)),
      waiting_(model.ranks(), std::vector<bool>(kGroupKinds)),
      groups_(kGroupKinds) {
  if (model.computesAtOnce() > 0) {
    const int hosts = (model.ranks() + model.hostRanks() - 1) / model.hostRanks();
    core_free_.assign(hosts, std::vector<double>(model.computesAtOnce(), 0.0));
  }
  for (int kind = 0; kind < kGroupKinds; ++kind) {
    int count = 0;
    for (int r = 0; r < model.ranks(); ++r)
      count = std::max(count, model.groupOf(r, static_cast<GroupKind>(kind)) + 1);
    groups_[kind].resize(count);
  }
}

void StepReplay::run(std::vector<double>& clock, const std::vector<double>& extra_ns,
                     std::vector<SimStep>& out, bool record_passes) {
  const int ranks = model_.ranks();
  std::fill(next_.begin(), next_.end(), 0);
  messages_.clear();
  unmatched_sends_.clear();
  sends_done_.clear();
  posted_recvs_.clear();
  out.assign(ranks, SimStep{});
  int finished = 0;
  std::vector<bool> done(ranks, false);
  // Where ranks queue for cores, they must ask in the order of their clocks (a rank run far
  // ahead would hold a core over times it is idle): one action at a time, earliest first.
  // Elsewhere each rank runs until it waits, in rank order (a thousand ranks stay cheap).
  const bool in_time_order = model_.computesAtOnce() > 0;
  std::vector<int> order(static_cast<size_t>(ranks));
  std::iota(order.begin(), order.end(), 0);
  while (finished < ranks) {
    bool moved = false;
    if (in_time_order)
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int b) { return clock[a] < clock[b]; });
    for (const int r : order) {
      if (done[r]) continue;
      const size_t before = next_[r];
      if (advance(r, clock, extra_ns, out[r], record_passes, in_time_order)) {
        done[r] = true;
        ++finished;
      }
      moved = moved || next_[r] != before || done[r];
      if (moved && in_time_order) break;
    }
    if (!moved) {
      for (int r = 0; r < ranks; ++r)
        if (!done[r])
          throw std::logic_error("the simulated step cannot finish: rank " + std::to_string(r) +
                                 " waits at its action " + std::to_string(next_[r]));
    }
  }
}

double StepReplay::takeCore(int rank, double t, double ns) {
  if (core_free_.empty()) return t;
  std::vector<double>& cores = core_free_[rank / model_.hostRanks()];
  // A core free by `t`, the one freed last (a rank's passes one after another keep one core
  // rather than take every core's turn), else the one freed first.
  double* best = &*std::min_element(cores.begin(), cores.end());
  for (double& core : cores)
    if (core <= t && (*best > t || core > *best)) best = &core;
  const double start = std::max(t, *best);
  *best = start + ns;
  return start;
}

void StepReplay::postSend(int rank, const SimAction& a, double t) {
  const uint64_t key = messageKey(rank, a.tag);
  if (!a.rendezvous) {  // eager: on its way at once
    messages_[key] = t + a.ns;
    posted_recvs_.erase(key);
    return;
  }
  const auto posted = posted_recvs_.find(key);
  if (posted == posted_recvs_.end()) {
    unmatched_sends_[key] = {t, a.ns};
    return;
  }
  messages_[key] = sends_done_[key] = std::max(t, posted->second) + a.ns;
  posted_recvs_.erase(posted);
}

void StepReplay::postRecv(int rank, const SimAction& a, double t) {
  const uint64_t key = messageKey(rank + a.peer, a.tag);
  const auto sent = unmatched_sends_.find(key);
  if (sent == unmatched_sends_.end()) {
    if (!messages_.count(key)) posted_recvs_[key] = t;  // an eager one may be there already
    return;
  }
  messages_[key] = sends_done_[key] = std::max(t, sent->second.first) + sent->second.second;
  unmatched_sends_.erase(sent);
}

bool StepReplay::awaitMessage(std::unordered_map<uint64_t, double>& at, uint64_t key, double& t,
                              SimStep& out, bool bubble) {
  const auto it = at.find(key);
  if (it == at.end()) return false;
  if (it->second > t) {
    out.phases[kWait] += static_cast<int64_t>(it->second - t);
    if (bubble) out.bubble_ns += static_cast<int64_t>(it->second - t);
    t = it->second;
  }
  at.erase(it);
  return true;
}

bool StepReplay::advance(int rank, std::vector<double>& clock, const std::vector<double>& extra_ns,
                         SimStep& out, bool record_passes, bool one) {
  const std::vector<SimAction>& actions = model_.plan(rank).actions;
  double& t = clock[rank];
  while (next_[rank] < actions.size()) {
    const SimAction& a = actions[next_[rank]];
    switch (a.kind) {
      case ActionKind::kCompute: {
        const double start = a.shared ? takeCore(rank, t, a.ns) : t;
        out.phases[kWait] += static_cast<int64_t>(start - t);  // ready, no core free
        t = start + a.ns;
        out.phases[a.phase] += static_cast<int64_t>(a.ns);
        if (record_passes && a.pass != 0) recordPass(out.passes, a.pass, start, t);
        break;
      }
      case ActionKind::kSleep:
        t += extra_ns[rank];
        out.phases[a.phase] += static_cast<int64_t>(extra_ns[rank]);
        break;
      case ActionKind::kSend:
        postSend(rank, a, t);
        out.bytes_tx += a.bytes;
        out.bytes_raw += a.bytes;
        out.bytes_pipeline += a.bytes;
        ++out.sends;
        break;
      case ActionKind::kPostRecv:
        postRecv(rank, a, t);
        break;
      case ActionKind::kSendWait:
        if (a.rendezvous && !awaitMessage(sends_done_, messageKey(rank, a.tag), t, out, false))
          return false;
        break;
      case ActionKind::kRecv:
        if (!awaitMessage(messages_, messageKey(rank + a.peer, a.tag), t, out, true)) return false;
        ++out.recvs;
        break;
      case ActionKind::kCollective: {
        const int kind = static_cast<int>(a.group);
        Rendezvous& g = groups_[kind][model_.groupOf(rank, a.group)];
        if (!waiting_[rank][kind]) {  // arrives
          waiting_[rank][kind] = true;
          g.latest = std::max(g.latest, t);
          if (++g.arrived == model_.groupSize(a.group)) {
            g.done_last = g.latest;
            g.done_end = g.latest + a.ns;
            ++g.done;
            g.arrived = 0;
            g.latest = 0;
          }
        }
        if (g.done == joined_[rank][kind]) return false;  // the others are not there yet
        waiting_[rank][kind] = false;
        ++joined_[rank][kind];
        // The slices' sums count whole as communication (inside a pass), as the engine's do.
        const double waited = g.done_last - t;
        const int wait_phase = a.group == GroupKind::kTensor ? kComm : kWait;
        out.phases[wait_phase] += static_cast<int64_t>(waited);
        out.phases[kComm] += static_cast<int64_t>(a.ns);
        if (a.group == GroupKind::kTensor)
          out.comm_tensor_ns += static_cast<int64_t>(waited + a.ns);
        t = g.done_end;
        countBytes(out, a);
        if (a.counts == CollectiveCount::kAllreduce) ++out.allreduces;
        if (a.counts == CollectiveCount::kReduceScatterAllGather) {
          ++out.reduce_scatters;
          ++out.all_gathers;
        }
        break;
      }
    }
    ++next_[rank];
    if (one) break;
  }
  return next_[rank] >= actions.size();
}

}  // namespace ranklab
