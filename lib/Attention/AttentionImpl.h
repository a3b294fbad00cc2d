//===- AttentionImpl.h - the state of one attention plan ------ -*- C++ -*-===//
//
// Shared by Plan.cpp (choosing and loading the kernels), Run.cpp (launches
// and the guardrail), Profile.cpp (NVTX ranges, event timings) and
// Support.cpp (names, environment flags, compiling and loading).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/Attention.h"

#include <optional>
#include <string>
#include <vector>

namespace tile {
namespace attention_detail {

/// A loaded kernel with its launch shape: which argument list it takes and
/// the rows per program (BM).
struct Launchable {
  /// Variant: flex_fwd.tile (fast or reference schedule), its argument list.
  enum class Kind { FastBHSD, FastBSHD, Reference, Variant };
  Kind kind = Kind::Reference;
  std::string name;
  Kernel kernel;
  unsigned bm = 0;
  bool loaded = false;
};

/// NVTX v2 (libnvToolsExt.so.1, opened with dlopen on first use); no-ops
/// when it is absent.
void nvtxPush(const std::string &name);
void nvtxPop();

/// CUDA-event timings of the calls, a ring of event pairs read when a slot
/// is reused (its call finished long ago) and by summary().
class Profiler {
public:
  Status init(const Device &device, std::string kernel, double flopsPerCall);
  bool on() const { return !ring_.empty(); }
  Status begin(Stream stream);
  Status end(Stream stream);
  ProfileSummary summary();

private:
  Status harvest(std::size_t slot);
  std::vector<EventTimer> ring_;
  std::vector<bool> pending_;
  std::size_t next_ = 0;
  std::vector<float> ms_;
  std::string kernel_;
  double flops_ = 0;
};

/// The guardrail's kernels and buffers, made at plan time.
/// Bytes of the guardrail's result slot per tensor (count, first row,
/// padding): 16, so that every slot is a 16-byte aligned pointer argument.
constexpr std::size_t kGuardSlotBytes = 16;

struct Guardrail {
  Kernel count, reduce;
  unsigned programs = 0;
  DeviceBuffer partial, out; ///< 2 * programs i32; a 16-byte slot per checked tensor
  std::optional<EventTimer> fence; ///< an event pair used as a stream sync
};

/// What one guardrail pass found in one tensor.
struct TensorCheck {
  std::string tensor;
  std::int64_t count = 0;
  std::int64_t firstRow = -1;
};

bool envFlag(const char *name);
/// One line of a (multi-line) error for the log: the first line that says
/// "error:" (a compiler diagnostic), else the first line.
std::string firstLine(const std::string &text);
/// Why `p`'s shape, sizes or scale are invalid ("" when valid): the checks
/// the forward and the backward share.
std::string validate(const AttentionParams &p);
/// Compiles `path` through the JIT and loads it; errors say "WHAT failed to
/// compile: <first diagnostic line>" or "... failed to load: ...".
Expected<Kernel> compileAndLoad(JIT &jit, const Device &dev,
                                const std::string &path, const Defines &d,
                                const std::string &kernel,
                                const std::string &arch, const Schedule &s,
                                const std::string &what);
unsigned ceilDiv(std::int64_t a, std::int64_t b);

// Variant.cpp: the forward variants through flex_fwd.tile.
int keysOf(const AttentionParams &p);    ///< seqlenK, or seqlen
int kvHeadsOf(const AttentionParams &p); ///< headsKv, or heads
/// True when any variant field is away from its default.
bool isVariant(const AttentionParams &p);
/// Why the variant fields are invalid ("" when valid).
std::string validateVariant(const AttentionParams &p);
/// Compiles and loads flex_fwd (or a generated instance with the score mod)
/// for `p` with `defines` (BM, BN) plus the variant's own.
Expected<Kernel> compileVariant(JIT &jit, const Device &dev,
                                const std::string &kernelDir,
                                const AttentionParams &p, Defines defines,
                                const std::string &arch, const Schedule &s,
                                const std::string &what);
/// flex_fwd's arguments: the plan's sizes and scale, the run's pointers.
std::vector<KernelArg> variantArgs(const AttentionParams &plan,
                                   const AttentionParams &run, DevicePtr lse);
/// " H_kv=2 window=(255, 0) softcap=30 alibi" ("" for plain attention).
std::string describeVariant(const AttentionParams &p);

} // namespace attention_detail

struct Attention::Impl {
  explicit Impl(const Device &d) : device(d) {}

  Device device;
  AttentionParams params;
  AttentionOptions options;
  std::string kernelDir;
  attention_detail::Launchable fast, reference;
  attention_detail::Launchable *active = nullptr;
  std::string planLine, fallbackReason;
  DeviceBuffer scratchLse;
  bool guardrail = false;
  attention_detail::Guardrail guard;
  attention_detail::Profiler profiler;
  bool printProfile = false;
  RunReport last;

  /// Sends a decision line to the callback, else (warnings, or everything
  /// with TILEC_ATTENTION_LOG=1) to stderr.
  void log(const std::string &line, bool warning) const;
  /// One launch of `k` on `p`'s pointers and stream.
  Status launch(const attention_detail::Launchable &k,
                const AttentionParams &p);
  /// The guardrail over o (and q, k, v): one sync; `checks` in that order.
  Status check(const AttentionParams &p, bool inputs,
               std::vector<attention_detail::TensorCheck> &checks);
  Status guardedRun(const AttentionParams &p);
  std::string describe() const; ///< "bf16 bhsd B=2 H=16 S=4096 D=128 causal"
};

} // namespace tile
