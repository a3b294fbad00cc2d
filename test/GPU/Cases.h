//===- Cases.h - flash_fwd parity cases on the GPU ------------ -*- C++ -*-===//
//
// One case: fresh seeded inputs, the fp64 reference, then for each variant
// (JIT, AOT) 5 launches into NaN-poisoned outputs with guard rows after them,
// checked for accuracy, full coverage, untouched guards and bitwise
// repeatability. One result line per variant.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Reference.h"

#include "tile/JIT.h"
#include "tile/ConfigTable.h"
#include "tile/Runtime.h"

#include <random>
#include <string>
#include <vector>

namespace tilegpu {

constexpr int kRepeats = 5;

struct Config {
  DType dtype;
  bool causal;
  int d;
  /// "bf16_causal_d128".
  std::string name() const;
  /// T, CAUSAL, D, the extra defines (setExtraDefines) and, with a config
  /// table (setConfigTable), the table's defines for this config.
  tile::Defines defines() const;
  /// The schedule (setSchedule), or the table's for this config.
  tile::Schedule schedule() const;
  double tolerance() const { return dtype == DType::F32 ? 1e-5 : 1e-2; }
  double lseTolerance() const { return dtype == DType::F32 ? 1e-5 : 1e-3; }
};

/// One way of getting the kernel: "JIT" or "AOT".
struct Variant {
  std::string path;
  tile::Kernel kernel;
  std::string ptx;
  int bm = 0; ///< rows per program, from the manifest
};

struct Totals {
  int cases = 0, failed = 0;
  std::vector<std::string> failures;
  bool fatal = false; ///< a launch fault: the context is unusable
};

struct CaseSpec {
  Problem p;
  float qScale = 1.0f; ///< > 1: the large-logit case (FlashAttention's rule)
  std::string label;   ///< extra words for the result line
};

/// BM from the manifest (needed for the grid); false with `error` set.
bool blockRows(const tile::Manifest &m, int &bm, std::string &error);

/// Prints "<line> PASS|FAIL (why)" and counts it.
void report(Totals &totals, const std::string &line, bool pass,
            const std::string &why);

/// The end of a test's main(): prints "summary: N checks, ..." with the
/// seed and every failure; returns its exit code (1 when a check failed, a
/// launch faulted, or `--only` matched nothing).
int summarize(const Totals &totals, unsigned long long seed,
              const std::string &only);

/// Runs `spec` through every variant (see the file comment).
void runCase(const tile::Device &dev, std::vector<Variant *> variants,
             const Config &c, const CaseSpec &spec, std::mt19937_64 &rng,
             Totals &totals);

/// seqlen 0 through the runtime: a grid with a zero dimension launches
/// nothing and writes nothing.
void runEmptyGrid(const tile::Device &dev, Variant &var, const Config &c,
                  Totals &totals);

/// -D values every config is compiled with in addition to its own
/// (tile-gpu-tests --define NAME=VALUE), e.g. TMA=true.
void setExtraDefines(const tile::Defines &d);
/// The schedule every config is compiled with (tile-gpu-tests --schedule).
void setSchedule(const tile::Schedule &s);
/// Every config takes its defines and schedule from `table` as the JIT
/// would for a launch of `seqlen` (tile-gpu-tests --config-table).
void setConfigTable(const tile::ConfigTable &table, int64_t seqlen);

} // namespace tilegpu
