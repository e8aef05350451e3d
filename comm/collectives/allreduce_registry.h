// The all-reduce algorithms by name, each with what it does and how to make it: the one
// list that the job schema's check, error messages, CLI usage and `ranklab bench` use.
// `ring` (ring_allreduce.h), `mpi` (the backend's native one), `hierarchical`
// (hierarchical_allreduce.h), `shm` (shm_allreduce.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/collectives/allreduce.h"

namespace ranklab {

struct AllreduceAlgorithm {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Allreduce>(Communicator&, const AllreduceOptions&)> make;
  // Its traits, so that callers (the job's key relevance, tests, benches) ask the entry
  // rather than name algorithms: AllreduceOptions::ranks_per_host shapes it (the job key
  // parallel.ranks_per_host applies); every rank sends about 2(n-1)/n of the buffer (a
  // bandwidth-optimal all-reduce, not a root's or a tree's uneven share); it is the peer
  // the others are measured against (`ranklab bench allreduce`'s X/mpi columns).
  bool takes_ranks_per_host = false;
  bool even_share = true;
  bool reference = false;
  // Its reduce-scatter and all-gather halves run apart on windows of the buffer, so ZeRO
  // can shard the gradient over them (ring_allreduce.h's *Window).
  bool shards = false;
  // Bytes `rank` sends per all-reduce of `bytes` among n ranks (ranks_per_host: the
  // hierarchical shape, 0 = one host), as the algorithm counts them (mpi: the ring's), and
  // that formula in words (N ranks, S bytes; L ranks per host, H hosts): the lesson and
  // `runs show` set what was measured beside it.
  std::function<double(int rank, int n, int ranks_per_host, double bytes)> bytes_sent;
  std::string formula;
};

// An all-reduce resolved once from the job: its registry entry and options. Strategies
// receive this, never the job's name, and make as many collectives from it as they need.
class AllreduceChoice {
 public:
  // Throws std::invalid_argument naming the algorithm and the allowed ones.
  explicit AllreduceChoice(const std::string& name, const AllreduceOptions& options = {});
  const AllreduceAlgorithm& algorithm() const { return *algorithm_; }
  const AllreduceOptions& options() const { return options_; }
  std::unique_ptr<Allreduce> make(Communicator& comm) const {
    return algorithm_->make(comm, options_);
  }

 private:
  const AllreduceAlgorithm* algorithm_;
  AllreduceOptions options_;
};

const std::vector<AllreduceAlgorithm>& allreduceRegistry();
const std::vector<std::string>& allreduceAlgorithms();             // the names, in registry order
const AllreduceAlgorithm* findAllreduce(const std::string& name);  // null if unknown
std::string allreduceAlgorithmList();                              // "ring, mpi, hierarchical, shm"
// The names of the algorithms whose entry has `trait`: {"ring"} for &AllreduceAlgorithm::shards.
std::vector<std::string> allreduceAlgorithmsWith(bool AllreduceAlgorithm::*trait);

// Collective over `comm` (hierarchical splits it). Throws std::invalid_argument naming
// the algorithm and the allowed ones.
std::unique_ptr<Allreduce> makeAllreduce(const std::string& algorithm, Communicator& comm,
                                         const AllreduceOptions& options = {});

}  // namespace ranklab
