// Command-line options shared by the benchmark programs, checked with clear errors.
#pragma once

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

namespace ranklab::bench {

struct Args {
  std::string model = "mlp";   // mlp | cnn | cnn-wide | gpt
  std::string dtype = "fp32";  // fp32 | bf16: AMP's products (master weights stay fp32)
  int batch = 64;
  int threads = 1;
  int steps = 500;
  int warmup = 20;
  bool json = false;
};

inline int integerOption(const std::string& program, const std::string& flag,
                         const std::string& value, int minimum) {
  size_t used = 0;
  int parsed = 0;
  try {
    parsed = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || parsed < minimum) {
    throw std::invalid_argument(program + ": " + flag + " expects an integer >= " +
                                std::to_string(minimum) + ", got '" + value + "'");
  }
  return parsed;
}

// --model mlp|cnn|cnn-wide|gpt --batch N --threads T --steps S --warmup W [--dtype fp32|bf16]
// [--json]
inline Args parseArgs(const std::string& program, int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--json") {
      args.json = true;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(program + ": " + flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--model") {
      if (value != "mlp" && value != "cnn" && value != "cnn-wide" && value != "gpt") {
        throw std::invalid_argument(program + ": --model must be mlp, cnn, cnn-wide or gpt, got '" +
                                    value + "'");
      }
      args.model = value;
    } else if (flag == "--dtype") {
      if (value != "fp32" && value != "bf16")
        throw std::invalid_argument(program + ": --dtype must be fp32 or bf16, got '" + value +
                                    "'");
      args.dtype = value;
    } else if (flag == "--batch") {
      args.batch = integerOption(program, flag, value, 1);
    } else if (flag == "--threads") {
      args.threads = integerOption(program, flag, value, 1);
    } else if (flag == "--steps") {
      args.steps = integerOption(program, flag, value, 1);
    } else if (flag == "--warmup") {
      args.warmup = integerOption(program, flag, value, 0);
    } else {
      throw std::invalid_argument(program + ": unknown option " + flag +
                                  " (allowed: --model, --dtype, --batch, --threads, --steps, "
                                  "--warmup, --json)");
    }
  }
  return args;
}

// A bench program's main: run(argc, argv), or an error printed as "program: what" and 1.
inline int runReportingErrors(const char* program, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}

}  // namespace ranklab::bench
