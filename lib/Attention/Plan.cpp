//===- Plan.cpp - choose, compile and load the attention kernels ----------===//
//
// Attention::plan: validate the params, pick the fast kernel (flash_fwd or
// flash_fwd_bshd) and its config table entry for the GPU's arch, compile and
// load it through the JIT; on any reason it cannot run, the reference kernel
// (flash_fwd_ref) as the policy allows. The guardrail's kernels, the scratch
// LSE and the profiler's events are made here too, so that run() allocates
// nothing.
//
//===----------------------------------------------------------------------===//
#include "lib/Attention/AttentionImpl.h"

#include "tile/ConfigTable.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

using namespace tile;
using namespace tile::attention_detail;

std::string tile::attention_detail::validate(const AttentionParams &p) {
  if (p.batch < 1 || p.heads < 1)
    return fmt::format("batch ({}) and heads ({}) must be >= 1", p.batch,
                       p.heads);
  if (p.seqlen < 0)
    return fmt::format("seqlen ({}) must be >= 0", p.seqlen);
  if (p.headDim < 1 || p.headDim > 256)
    return fmt::format("head dim {} is outside 1..256", p.headDim);
  if (!(p.scale >= 0) || std::isinf(p.scale))
    return fmt::format("scale {} must be finite and >= 0 (0: 1/sqrt(D))",
                       p.scale);
  // Elements of one tensor, and its rows, must fit the kernels' i32 row
  // indices.
  std::int64_t rows = std::int64_t(p.batch) * p.heads * p.seqlen;
  if (rows > INT32_MAX)
    return fmt::format("B*H*S = {} rows exceed 2^31 - 1", rows);
  return "";
}

namespace {

/// "sm_90a" or "sm_80" where the fast kernel has a table, else "".
std::string fastArch(const Device &d) {
  if (d.computeCapabilityMajor() == 9 && d.computeCapabilityMinor() == 0)
    return "sm_90a";
  if (d.computeCapabilityMajor() == 8)
    return "sm_80";
  return "";
}

/// Head dims the fast kernel is tuned for: the table's entries, or (a table
/// without entries, sm_80 today) the head dims the kernel is tested at.
std::set<int> tableHeadDims(const ConfigTable &t) {
  std::set<int> dims;
  for (const ConfigTable::Entry &e : t.entries())
    if (auto it = e.match.find("D"); it != e.match.end())
      dims.insert(std::atoi(it->second.c_str()));
  if (dims.empty())
    dims = {64, 128};
  return dims;
}

unsigned manifestBM(const Kernel &k) {
  auto it = k.manifest().constants.find("BM");
  return it == k.manifest().constants.end()
             ? 0
             : unsigned(std::max(0, std::atoi(it->second.c_str())));
}

/// The fixed conservative schedule of the reference kernel: 4 warps, no
/// TMA, no ping-pong, no producer, not persistent (sm_80 ignores most).
Schedule referenceSchedule() {
  Schedule s;
  s.numWarps = 4;
  s.tma = false;
  s.tmaStore = false;
  s.pingpong = false;
  return s;
}

/// Plans the fast kernel into impl.fast; "" when it is ready, else why not.
std::string planFast(Attention::Impl &impl, std::string &line) {
  const AttentionParams &p = impl.params;
  std::string name =
      p.layout == AttentionLayout::BHSD ? "flash_fwd" : "flash_fwd_bshd";
  std::string arch = fastArch(impl.device);
  if (arch.empty())
    return fmt::format("no config table for cc {}.{} (the fast kernel has "
                       "tables for sm_90a and sm_80)",
                       impl.device.computeCapabilityMajor(),
                       impl.device.computeCapabilityMinor());
  std::string tablePath =
      impl.kernelDir + "/configs/flash_fwd." + arch + ".json";
  ConfigTable table;
  std::string why;
  if (!ConfigTable::load(tablePath, table, why))
    return "cannot read the config table: " + firstLine(why);
  std::set<int> dims = tableHeadDims(table);
  if (!dims.count(p.headDim)) {
    std::string listed;
    for (int d : dims)
      listed += (listed.empty() ? "" : ", ") + std::to_string(d);
    return fmt::format("head dim {} not in the config table ({}: {})",
                       p.headDim, "flash_fwd." + arch + ".json", listed);
  }
  bool variant = isVariant(p);
  if (variant)
    name = "flex_fwd";
  std::map<std::string, std::string> keys = {
      {"T", dtypeName(p.dtype)},
      {"D", std::to_string(p.headDim)},
      {"CAUSAL", p.causal ? "true" : "false"}};
  KernelConfig config = table.lookup(keys, p.seqlen);
  Defines defines = config.defines;
  for (const auto &[k, v] : keys)
    defines[k] = v;
  auto kernel =
      variant ? compileVariant(*impl.options.jit, impl.device, impl.kernelDir,
                               p, defines, arch, config.schedule, name)
              : compileAndLoad(*impl.options.jit, impl.device,
                               impl.kernelDir + "/" + name + ".tile", defines,
                               "", arch, config.schedule, name);
  if (!kernel)
    return kernel.error();
  impl.fast.kernel = kernel.take();
  impl.fast.bm = manifestBM(impl.fast.kernel);
  if (impl.fast.bm == 0)
    return name + "'s manifest has no positive constant BM";
  impl.fast.name = name;
  impl.fast.kind = variant ? Launchable::Kind::Variant
                  : p.layout == AttentionLayout::BHSD
                      ? Launchable::Kind::FastBHSD
                      : Launchable::Kind::FastBSHD;
  impl.fast.loaded = true;
  line = fmt::format("attention: {} (table {}, {})", name, config.origin,
                     arch);
  return "";
}

Status planReference(Attention::Impl &impl) {
  const AttentionParams &p = impl.params;
  if (isVariant(p)) {
    // flex_fwd.tile under the reference schedule, as sm_80 code.
    auto kernel = compileVariant(*impl.options.jit, impl.device,
                                 impl.kernelDir, p, {{"BM", "64"}, {"BN", "64"}},
                                 "sm_80", referenceSchedule(), "flex_fwd_ref");
    if (!kernel)
      return kernel.status();
    impl.reference.kernel = kernel.take();
    impl.reference.bm = 64;
    impl.reference.name = "flex_fwd_ref";
    impl.reference.kind = Launchable::Kind::Variant;
    impl.reference.loaded = true;
    return Status();
  }
  Defines defines = {{"D", std::to_string(p.headDim)},
                     {"DP", std::to_string(paddedHeadDim(p.headDim))},
                     {"CAUSAL", p.causal ? "true" : "false"},
                     {"BSHD", p.layout == AttentionLayout::BSHD ? "true"
                                                                : "false"},
                     {"T", dtypeName(p.dtype)}};
  // sm_80 PTX: mma.sync, which every GPU tilec supports runs (the driver
  // compiles it for newer ones).
  auto kernel = compileAndLoad(
      *impl.options.jit, impl.device, impl.kernelDir + "/flash_fwd_ref.tile",
      defines, "", "sm_80", referenceSchedule(), "flash_fwd_ref");
  if (!kernel)
    return kernel.status();
  impl.reference.kernel = kernel.take();
  impl.reference.bm = manifestBM(impl.reference.kernel);
  if (impl.reference.bm == 0)
    return Status::error("flash_fwd_ref's manifest has no positive BM");
  impl.reference.name = "flash_fwd_ref";
  impl.reference.kind = Launchable::Kind::Reference;
  impl.reference.loaded = true;
  return Status();
}

Status planGuardrail(Attention::Impl &impl) {
  const AttentionParams &p = impl.params;
  std::string path = impl.kernelDir + "/nonfinite_count.tile";
  // 4096 elements per program and iteration (32 per thread: four 16-byte
  // loads of 16-bit values), whole 16-byte vectors per row when the head
  // dim allows (the kernel then requires it of d at launch).
  int dp = paddedHeadDim(p.headDim);
  Defines defines = {{"DP", std::to_string(dp)},
                     {"BR", std::to_string(std::max(1, 4096 / dp))},
                     {"T", dtypeName(p.dtype)},
                     {"ALIGNED", p.headDim % 8 == 0 ? "true" : "false"}};
  std::string arch = impl.device.archString();
  auto count = compileAndLoad(*impl.options.jit, impl.device, path, defines,
                              "nonfinite_count", arch, referenceSchedule(),
                              "nonfinite_count");
  if (!count)
    return count.status();
  auto reduce = compileAndLoad(*impl.options.jit, impl.device, path, {},
                               "nonfinite_reduce", arch, referenceSchedule(),
                               "nonfinite_reduce");
  if (!reduce)
    return reduce.status();
  Guardrail &g = impl.guard;
  g.count = count.take();
  g.reduce = reduce.take();
  // A grid-stride loop: a few programs per SM read every row once.
  std::int64_t rows = std::int64_t(p.batch) * p.heads * p.seqlen;
  auto br = g.count.manifest().constants.find("BR");
  int perProgram =
      br == g.count.manifest().constants.end() ? 16 : std::atoi(br->second.c_str());
  g.programs = std::max(1u, std::min(ceilDiv(rows, std::max(1, perProgram)),
                                     unsigned(4 * std::max(1, impl.device.smCount()))));
  auto partial = DeviceBuffer::allocate(impl.device, 8 * g.programs);
  if (!partial)
    return partial.status();
  // o, q, k, v: a (count, first row) pair each, 16-byte aligned (what
  // the kernels assume of every pointer argument).
  auto out = DeviceBuffer::allocate(impl.device, kGuardSlotBytes * 4);
  if (!out)
    return out.status();
  g.partial = partial.take();
  g.out = out.take();
  if (Status s = g.out.fill(0); !s.ok()) // defined before the first check
    return s;
  auto fence = EventTimer::create(impl.device);
  if (!fence)
    return fence.status();
  g.fence.emplace(fence.take());
  return Status();
}

} // namespace

//===----------------------------------------------------------------------===//
// Attention::Impl
//===----------------------------------------------------------------------===//

void Attention::Impl::log(const std::string &line, bool warning) const {
  if (options.log)
    options.log(line);
  else if (warning || envFlag("TILEC_ATTENTION_LOG"))
    std::fprintf(stderr, "%s\n", line.c_str());
}

std::string Attention::Impl::describe() const {
  const AttentionParams &p = params;
  return fmt::format("{} {} B={} H={} S={} D={}{}{}", dtypeName(p.dtype),
                     layoutName(p.layout), p.batch, p.heads, p.seqlen,
                     p.headDim, p.causal ? " causal" : "",
                     describeVariant(p));
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

Attention::Attention(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Attention::Attention(Attention &&) noexcept = default;
Attention &Attention::operator=(Attention &&) noexcept = default;

Attention::~Attention() {
  if (impl_ && impl_->printProfile) {
    ProfileSummary s = impl_->profiler.summary();
    if (s.calls)
      std::fprintf(stderr, "%s\n", s.str().c_str());
  }
}

Expected<Attention> Attention::plan(const Device &device,
                                    const AttentionParams &params,
                                    AttentionOptions options) {
  if (!options.jit)
    return Status::error("attention: AttentionOptions::jit is empty (use "
                         "Attention::create, which makes one)");
  if (std::string why = validate(params); !why.empty())
    return Status::error("attention: " + why);
  if (std::string why = validateVariant(params); !why.empty())
    return Status::error("attention: " + why);
  if (!device.isSupported())
    return Status::error("attention: " + device.description() +
                         ": tilec kernels need compute capability 8.0+");

  auto impl = std::make_unique<Impl>(device);
  impl->params = params;
  if (impl->params.scale == 0)
    impl->params.scale = float(1.0 / std::sqrt(double(params.headDim)));
  impl->options = std::move(options);
  const AttentionOptions &o = impl->options;
  impl->kernelDir = o.kernelDir.empty() ? defaultKernelDir() : o.kernelDir;
  impl->guardrail = o.guardrail || envFlag("TILEC_ATTENTION_GUARDRAIL");
  bool canFallBack = o.policy != FallbackPolicy::Fail;

  std::string line;
  std::string why = o.forceReference
                        ? "forced (AttentionOptions::forceReference)"
                        : planFast(*impl, line);
  if (!why.empty()) {
    bool variant = isVariant(params);
    std::string fastName = variant ? "flex_fwd"
                           : params.layout == AttentionLayout::BHSD
                               ? "flash_fwd"
                               : "flash_fwd_bshd";
    if (!canFallBack && !o.forceReference)
      return Status::error("attention: " + fastName + " cannot run: " + why +
                           " (policy Fail)");
    impl->fallbackReason = why;
    line = std::string("attention: fallback ") +
           (variant ? "flex_fwd_ref" : "flash_fwd_ref") + ": " + why;
  }
  // The reference is needed now, or later when the guardrail fires.
  if (!why.empty() || (impl->guardrail && canFallBack)) {
    if (Status s = planReference(*impl); !s.ok())
      return s.withContext("attention: no kernel can run (" +
                           (why.empty() ? std::string("fast kernel ready")
                                        : why) +
                           ")");
  }
  impl->active = why.empty() ? &impl->fast : &impl->reference;
  impl->planLine = line;
  impl->log(line, !why.empty() && o.policy == FallbackPolicy::FallbackWarn);

  if (impl->guardrail)
    if (Status s = planGuardrail(*impl); !s.ok())
      return s.withContext("attention: guardrail");
  if (params.lse == 0 && params.seqlen > 0) {
    auto lse = DeviceBuffer::allocate(
        device, std::size_t(params.batch) * params.heads * params.seqlen * 4);
    if (!lse)
      return lse.status().withContext("attention: scratch LSE");
    impl->scratchLse = lse.take();
  }
  impl->printProfile = envFlag("TILEC_PROFILE");
  if (o.profile || impl->printProfile) {
    // Products really computed (variants: the visible pairs).
    double flops = 4.0 * params.batch * params.heads * params.headDim *
                   (isVariant(params) ? visibleProducts(params)
                                      : double(params.seqlen) * params.seqlen *
                                            (params.causal ? 0.5 : 1));
    if (Status s = impl->profiler.init(
            device, impl->active->name + " [" + impl->describe() + "]", flops);
        !s.ok())
      return s.withContext("attention: profiling");
  }
  impl->last.kernel = impl->active->name;
  return Attention(std::move(impl));
}

const std::string &Attention::kernelName() const { return impl_->active->name; }
bool Attention::usesReference() const {
  return impl_->active == &impl_->reference;
}
const std::string &Attention::planLine() const { return impl_->planLine; }
const std::string &Attention::fallbackReason() const {
  return impl_->fallbackReason;
}
const Kernel &Attention::kernel() const { return impl_->active->kernel; }
const RunReport &Attention::lastReport() const { return impl_->last; }
ProfileSummary Attention::profileSummary() { return impl_->profiler.summary(); }
