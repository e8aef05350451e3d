#include "app/cli/plan_commands.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/cli/json_output.h"
#include "app/cli/memory_check.h"
#include "app/cli/report_format.h"
#include "app/terminal_text.h"
#include "engine/job/job_file.h"
#include "engine/sim/layout_plan.h"
#include "engine/sim/simulator.h"
#include "engine/train/memory_estimate.h"
#include "launch/calibrate.h"
#include "launch/child_process.h"
#include "storage/run_origin.h"
#include "storage/run_store.h"

namespace ranklab {

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

JobSpec jobOf(const CliArgs& args) {
  JobOverrides overrides = args.overrides;
  if (args.ranks) overrides.push_back("parallel.ranks=" + std::to_string(*args.ranks));
  return loadJob(positional(args, 1, "job file"), overrides);
}

std::string calibrationPathOf(const CliArgs& args) {
  return args.calibration.empty() ? defaultCalibrationPath() : args.calibration;
}

CalibrateOptions calibrateOptions(const CliArgs& args) {
  CalibrateOptions options;
  options.bench.worker_path = args.worker;
  options.progress = [](const std::string& line) { std::cerr << "calibrate: " << line << "\n"; };
  return options;
}

NewRun simulatedRunOf(const JobSpec& job, const std::string& job_path) {
  NewRun run;
  run.name = job.name + " (simulated)";
  run.job_path = job_path;
  run.job_toml = toTomlText(job);
  run.world = job.parallel.ranks;
  run.strategy = job.parallel.strategy;
  run.algorithm = job.parallel.algorithm;
  run.codec = job.compression.codec;
  run.amp = nameText(job.amp.dtype);
  run.epochs = job.train.epochs;
  run.origin = originName(RunOrigin::kSimulated);
  return run;
}

nlohmann::json phasesJson(const Prediction& p) {
  nlohmann::json phases;
  for (int i = 0; i < kStepPhaseCount; ++i) phases[kStepPhaseNames[i]] = p.phases[i] / 1e9;
  int64_t compute = 0;
  for (int i = 0; i < kStepPhaseCount; ++i)
    if (kStepPhaseKinds[i] == PhaseKind::kCompute) compute += p.phases[i];
  phases["compute"] = compute / 1e9;
  phases["exposed_comm"] = p.phases[5] / 1e9;
  phases["bubble"] = p.bubble_ns / 1e9;
  phases["wait_other"] = (p.phases[4] - p.bubble_ns) / 1e9;
  return phases;
}

nlohmann::json layoutJson(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  return {{"ranks", p.ranks},         {"data", p.ranks / (p.pipeline * p.tensor)},
          {"pipeline", p.pipeline},   {"tensor", p.tensor},
          {"zero", p.zero},           {"microbatches", p.microbatches},
          {"schedule", p.schedule},   {"sequence_parallel", p.sequence_parallel},
          {"algorithm", p.algorithm}, {"codec", job.compression.codec}};
}

std::string layoutText(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  char text[160];
  std::snprintf(text, sizeof text, "d%d p%d t%d zero%d m%d %s%s", p.ranks / (p.pipeline * p.tensor),
                p.pipeline, p.tensor, p.zero, p.microbatches,
                p.pipeline > 1 ? nameText(p.schedule).c_str() : "-",
                p.sequence_parallel ? " sp" : "");
  return text;
}

// `job` simulated and stored as a run; its id and the prediction.
std::pair<int64_t, Prediction> storeSimulation(RunStore& store, const JobSpec& job,
                                               const std::string& job_path,
                                               const Calibration& calibration, int64_t steps) {
  SimulationOptions options;
  options.steps = steps;
  options.seed = job.train.seed;
  Prediction prediction;
  const int64_t id = store.storeWholeRun(simulatedRunOf(job, job_path), [&](RunRowSink& sink) {
    prediction = simulateRun(job, calibration, options, sink);
    return RunEnd{prediction.status, prediction.wall_s, prediction.wall_s};
  });
  return {id, prediction};
}

// "parallel.ranks=8 parallel.schedule=\"1f1b\"": the --set arguments, one per word.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The top `--run K` candidates run for real, one after another, each after its simulation is
// stored (so the run records it as its prediction): `ranklab run` as a child, as the
// workbench launches; predicted against measured printed for each.
int runPlanned(const CliArgs& args, const std::vector<PlanCandidate>& ranked,
               const Calibration& calibration) {
  const std::string job_path = positional(args, 1, "job file");
  const size_t count = std::min(ranked.size(), static_cast<size_t>(*args.run_top));
  std::printf("\n%-4s %-28s %12s %12s %8s %12s %12s %8s  %s\n", "#", "layout", "predicted ms",
              "measured ms", "error", "pred memory", "meas memory", "error", "run");
  int failed = 0;
  for (size_t i = 0; i < count; ++i) {
    const PlanCandidate& c = ranked[i];
    std::vector<std::string> settings = args.overrides;
    for (const std::string& w : words(c.overrides)) settings.push_back(w);
    if (args.steps) settings.push_back("train.max_steps=" + std::to_string(*args.steps));
    {
      RunStore store(args.db);
      storeSimulation(store, c.job, job_path, calibration, args.steps.value_or(0));
    }
    std::vector<std::string> argv = {"/proc/self/exe", "run",    job_path, "--db",
                                     args.db,          "--json", "--quiet"};
    if (!args.worker.empty()) argv.insert(argv.end(), {"--worker", args.worker});
    for (const std::string& s : settings) argv.insert(argv.end(), {"--set", s});
    std::cerr << "plan: running layout " << i + 1 << " (" << layoutText(c.job) << ")\n";
    ChildProcess child(argv, {});
    std::string out;
    while (child.running())
      child.pump(100, [&](bool is_stderr, const std::string& line) {
        if (is_stderr)
          std::cerr << "  " << line << "\n";
        else
          out += line + "\n";
      });
    const auto doc =
        nlohmann::json::parse(out.substr(std::min(out.find('{'), out.size())), nullptr, false);
    if (child.exitCode() != 0 || doc.is_discarded() || !doc.contains("prediction")) {
      std::printf("%-4zu %-28s  run failed (exit status %d)\n", i + 1, layoutText(c.job).c_str(),
                  child.exitCode());
      ++failed;
      continue;
    }
    const auto& p = doc["prediction"];
    const auto& e = doc["prediction_error"];
    const double measured_s = p.value("step_s", 0.0) / (1 + e.value("step", 0.0));
    const double measured_mem = p.value("memory_bytes", 0.0) / (1 + e.value("memory", 0.0));
    std::printf("%-4zu %-28s %12.2f %12.2f %+7.1f%% %12s %12s %+7.1f%%  %lld\n", i + 1,
                layoutText(c.job).c_str(), p.value("step_s", 0.0) * 1e3, measured_s * 1e3,
                e.value("step", 0.0) * 100,
                byteText(static_cast<size_t>(p.value("memory_bytes", 0.0))).c_str(),
                byteText(static_cast<size_t>(measured_mem)).c_str(), e.value("memory", 0.0) * 100,
                static_cast<long long>(doc.value("id", int64_t{0})));
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

Calibration calibrationFor(const CliArgs& args, const std::vector<JobSpec>& jobs) {
  const std::string path = calibrationPathOf(args);
  Calibration c = loadCalibration(path);
  if (c.machine != thisMachine().machine) {
    std::cerr << "calibration: " << path << " (measured on " << c.machine << ", " << c.measured
              << "); nothing is measured here\n";
    return c;
  }
  const auto t0 = std::chrono::steady_clock::now();
  size_t measured = 0;
  for (const JobSpec& job : jobs) {
    const std::vector<std::string> missing = missingFor(job, c);
    if (missing.empty()) continue;
    if (measured == 0)
      std::cerr << "calibration: " << path << " lacks " << missing.front()
                << (missing.size() > 1 ? " and " + std::to_string(missing.size() - 1) + " more"
                                       : "")
                << ": measuring it on this machine first\n";
    calibrateFor(job, c, calibrateOptions(args));
    measured += missing.size();
  }
  if (measured > 0) {
    saveCalibration(path, c);
    std::fprintf(stderr, "calibration: %zu things measured in %.1f s, stored in %s\n", measured,
                 secondsSince(t0), path.c_str());
  }
  return c;
}

int simulateCommand(const CliArgs& args) {
  noMoreThan(args, 2, "simulate");
  const auto t0 = std::chrono::steady_clock::now();
  JobSpec job = jobOf(args);
  // The stored job says how many steps were simulated (diff then compares like with like).
  if (args.steps) job.train.max_steps = *args.steps;
  const Calibration calibration = calibrationFor(args, {job});
  RunStore store(args.db);
  const auto [id, prediction] = storeSimulation(store, job, positional(args, 1, "job file"),
                                                calibration, args.steps.value_or(0));
  const auto summary = store.summary(id);
  if (args.json) {
    printJson(std::cout, summaryJson(*summary), std::cerr);
  } else {
    printSummary(std::cout, *summary);
    std::printf(
        "simulated %lld steps of %d ranks in %.1f s: run %lld (predicted step %.2f ms, "
        "largest rank's ledger %s)\n",
        static_cast<long long>(prediction.steps), job.parallel.ranks, secondsSince(t0),
        static_cast<long long>(id), prediction.step_s * 1e3,
        byteText(static_cast<size_t>(prediction.memory_bytes)).c_str());
    for (const std::string& note : prediction.notes) std::printf("  note: %s\n", note.c_str());
  }
  return prediction.status == "done" ? 0 : 1;
}

int calibrateCommand(const CliArgs& args) {
  noMoreThan(args, 2, "calibrate");
  const JobSpec job = args.positional.size() > 1 ? jobOf(args) : JobSpec{};
  const std::string path = calibrationPathOf(args);
  Calibration c = loadCalibration(path);
  if (c.machine != thisMachine().machine)
    throw std::runtime_error(path + ": measured on " + c.machine + ", not on this machine (" +
                             thisMachine().machine +
                             "): calibrate into a file of this machine's (--calibration FILE)");
  const std::vector<std::string> missing = missingFor(job, c);
  const auto t0 = std::chrono::steady_clock::now();
  if (missing.empty() && !args.measure_all) {
    std::cerr << "calibration: " << path << " already holds everything this job needs (--all "
              << "measures it again)\n";
  } else {
    std::cerr << "calibrating "
              << (args.measure_all ? "everything" : std::to_string(missing.size()) + " things")
              << " on " << c.machine << " (" << c.cores << " cores, " << c.cpu << ")\n";
    calibrateFor(job, c, calibrateOptions(args), args.measure_all);
    saveCalibration(path, c);
    std::fprintf(stderr, "calibrated in %.1f s: %s\n", secondsSince(t0), path.c_str());
  }
  if (!args.export_path.empty()) {
    saveCalibration(args.export_path, c);
    std::cerr << "exported to " << args.export_path << " (plan --calibration " << args.export_path
              << " on any machine)\n";
  }
  if (args.json) printJson(std::cout, nlohmann::json::parse(calibrationJson(c)), std::cerr);
  return 0;
}

int planCommand(const CliArgs& args) {
  noMoreThan(args, 2, "plan");
  const auto t0 = std::chrono::steady_clock::now();
  const JobSpec base = jobOf(args);
  const int ranks = args.ranks.value_or(base.parallel.ranks);
  std::vector<JobSpec> jobs;
  for (const PlanCandidate& c : layoutsOf(base, ranks)) jobs.push_back(c.job);
  const Calibration calibration = calibrationFor(args, jobs);
  const double limit = args.memory_per_rank.value_or(static_cast<double>(machineMemory().total) /
                                                     std::max(1, ranks));
  std::vector<std::string> skipped;
  const std::vector<PlanCandidate> ranked = planLayouts(
      base, ranks, calibration, limit, [&](const std::string& why) { skipped.push_back(why); });
  if (ranked.empty())
    throw std::runtime_error("no layout of " + base.name + " on " + std::to_string(ranks) +
                             " ranks can be simulated" +
                             (skipped.empty() ? "" : ": " + skipped.front()));
  const size_t shown = std::min(ranked.size(), static_cast<size_t>(args.top.value_or(20)));
  if (args.json) {
    nlohmann::json candidates = nlohmann::json::array();
    for (size_t i = 0; i < shown; ++i) {
      const PlanCandidate& c = ranked[i];
      candidates.push_back({{"layout", layoutJson(c.job)},
                            {"set", c.overrides},
                            {"step_s", c.prediction.step_s},
                            {"sample_s", c.sample_s},
                            {"memory_bytes", c.prediction.memory_bytes},
                            {"peak_bytes", c.peak_bytes},
                            {"fits", c.fits},
                            {"dominant", c.dominant},
                            {"phases", phasesJson(c.prediction)}});
    }
    printJson(std::cout,
              {{"candidates", candidates},
               {"memory_limit_bytes", limit},
               {"layouts", ranked.size()},
               {"calibration", calibration.machine}},
              std::cerr);
  } else {
    std::printf("%-4s %-28s %10s %12s %10s %5s %9s %9s %9s %9s  %s\n", "#", "layout", "step ms",
                "samples/s", "memory", "fits", "compute", "comm", "bubble", "wait", "dominant");
    for (size_t i = 0; i < shown; ++i) {
      const PlanCandidate& c = ranked[i];
      const nlohmann::json ph = phasesJson(c.prediction);
      std::printf("%-4zu %-28s %10.2f %12.0f %10s %5s %9.2f %9.2f %9.2f %9.2f  %s\n", i + 1,
                  layoutText(c.job).c_str(), c.prediction.step_s * 1e3, 1 / c.sample_s,
                  byteText(static_cast<size_t>(c.peak_bytes)).c_str(), c.fits ? "yes" : "NO",
                  ph["compute"].get<double>() * 1e3, ph["exposed_comm"].get<double>() * 1e3,
                  ph["bubble"].get<double>() * 1e3, ph["wait_other"].get<double>() * 1e3,
                  c.dominant.c_str());
    }
    std::printf("%zu layouts of %d ranks predicted in %.1f s (memory limit %s per rank)%s\n",
                ranked.size(), ranks, secondsSince(t0),
                byteText(static_cast<size_t>(limit)).c_str(),
                skipped.empty()
                    ? ""
                    : ("; " + std::to_string(skipped.size()) + " not simulated: " + skipped.front())
                          .c_str());
  }
  if (args.run_top) return runPlanned(args, ranked, calibration);
  return 0;
}

}  // namespace ranklab
