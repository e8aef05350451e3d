// A calibration of another machine, for tests that simulate without measuring anything here
// (a calibration of another machine is used as it is): a Linear and the loss head fitted
// by their kind, a ring, an SGD update. Enough for the spirals' MLP.
#pragma once

namespace ranklab::test_support {

constexpr const char* kElsewhereCalibration =
    R"json({"format": "ranklab-calibration-1", "machine": "elsewhere",
 "cpu": "test", "cores": 2, "measured": "2026-11-29T00:00:00Z",
 "layers": [{"layer": "Linear(2, 32) [96 params, out 32]", "kind": "Linear", "rows": 32,
             "threads": 1, "precision": "fp32", "macs": 2048, "forward_ns": 20000,
             "backward_ns": 40000},
            {"layer": "ReLU() [0 params, out 32]", "kind": "ReLU", "rows": 32, "threads": 1,
             "precision": "fp32", "macs": 1024, "forward_ns": 0, "backward_ns": 0},
            {"layer": "loss(2 classes x 1 positions)", "kind": "loss", "rows": 32, "threads": 1,
             "precision": "fp32", "macs": 64, "forward_ns": 5000, "backward_ns": 5000}],
 "links": [{"algorithm": "ring", "world": 2, "latency_ns": 20000, "ns_per_byte": 1}],
 "update_ns_per_param": {"sgd": 1}, "data_ns_per_byte": 0.1})json";

}  // namespace ranklab::test_support
