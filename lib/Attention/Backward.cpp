//===- Backward.cpp - plan and run the attention backward -----------------===//
//
// AttentionBackward::plan compiles the three backward kernels for the GPU's
// arch through the JIT (each with its config table's entry where
// examples/attention/configs has one for the arch), reads their block
// sizes from the manifests and
// allocates delta, the one workspace ([B*H, S] f32, 4 bytes per row). run()
// is three launches on the caller's stream, grids (ceil(S / block), B*H)
// (dK/dV: B*H_kv, each program summing its group's G query heads; a B*H
// over 65535 runs as several launches, as Kernel::launch splits any grid):
// preprocess reads O and dO once; dK/dV reads K, V once and Q, dO, LSE,
// delta once per key block; dQ reads Q, dO once and K, V once per query
// block (causal: half of each). Not deterministic: dK/dV adds dQ with f32
// atomics into dq_acc ([B*H, S, D] f32, zeroed at plan time) and
// flash_bwd_dq_cast writes dQ from it and zeroes it again, so every run
// starts from zeros without a memset on the run path.
//
//===----------------------------------------------------------------------===//
#include "tile/AttentionBackward.h"

#include "lib/Attention/AttentionImpl.h"

#include "tile/ConfigTable.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

using namespace tile;
using namespace tile::attention_detail;

namespace {

/// The shape fields of `p` as forward params, for the shared checks.
AttentionParams asForward(const AttentionBackwardParams &p) {
  AttentionParams f;
  f.batch = p.batch;
  f.heads = p.heads;
  f.seqlen = p.seqlen;
  f.headDim = p.headDim;
  f.dtype = p.dtype;
  f.layout = p.layout;
  f.causal = p.causal;
  f.scale = p.scale;
  return f;
}

std::string validateBackward(const AttentionBackwardParams &p) {
  if (std::string why = validate(asForward(p)); !why.empty())
    return why;
  if (p.layout != AttentionLayout::BHSD)
    return "layout bshd is not supported (the backward kernels read "
           "[B*H, S, D]: pass bhsd)";
  if (p.headDim != 64 && p.headDim != 96 && p.headDim != 128 &&
      p.headDim != 256)
    return fmt::format("head dim {} is not supported (the backward kernels "
                       "are built for 64, 96, 128 and 256)",
                       p.headDim);
  if (p.headsKv < 0 || (p.headsKv && p.heads % p.headsKv != 0))
    return fmt::format("heads_kv {} must divide heads {} (GQA groups)",
                       p.headsKv, p.heads);
  return "";
}

int kvHeads(const AttentionBackwardParams &p) {
  return p.headsKv ? p.headsKv : p.heads;
}

/// A positive integer constant of a manifest ("BM", "BN"), else 0.
unsigned manifestConstant(const Kernel &k, const char *name) {
  auto it = k.manifest().constants.find(name);
  int v = it == k.manifest().constants.end() ? 0 : std::atoi(it->second.c_str());
  return v > 0 ? unsigned(v) : 0;
}

} // namespace

struct AttentionBackward::Impl {
  explicit Impl(const Device &d) : device(d) {}
  Device device;
  AttentionBackwardParams params;
  AttentionOptions options;
  Kernel pre, dkdv, dq; ///< dq: flash_bwd_dq, or the cast (not deterministic)
  unsigned preBM = 0, dkdvBN = 0, dqBM = 0;
  DeviceBuffer delta, dqAcc;
  /// dq_acc may hold a partial sum (dK/dV ran, the cast did not launch):
  /// zeroed before the next run.
  bool dqAccDirty = false;
  bool atomic = false; ///< ATOMIC_DQ: dQ's cast runs instead of flash_bwd_dq
  std::string name = "flash_bwd", planLine;
};

AttentionBackward::AttentionBackward(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
AttentionBackward::AttentionBackward(AttentionBackward &&) noexcept = default;
AttentionBackward &
AttentionBackward::operator=(AttentionBackward &&) noexcept = default;
AttentionBackward::~AttentionBackward() = default;

Expected<AttentionBackward>
AttentionBackward::plan(const Device &device,
                        const AttentionBackwardParams &params,
                        AttentionOptions options) {
  if (!options.jit)
    return Status::error("attention backward: AttentionOptions::jit is empty "
                         "(use AttentionBackward::create, which makes one)");
  if (std::string why = validateBackward(params); !why.empty())
    return Status::error("attention backward: " + why);
  if (!device.isSupported())
    return Status::error("attention backward: " + device.description() +
                         ": tilec kernels need compute capability 8.0+");

  auto impl = std::make_unique<Impl>(device);
  Impl &b = *impl;
  b.params = params;
  if (b.params.scale == 0)
    b.params.scale = float(1.0 / std::sqrt(double(params.headDim)));
  b.options = std::move(options);
  std::string dir =
      b.options.kernelDir.empty() ? defaultKernelDir() : b.options.kernelDir;
  std::string arch = device.archString();

  Defines common = {{"T", dtypeName(params.dtype)},
                    {"D", std::to_string(params.headDim)}};
  Defines withCausal = common;
  withCausal["CAUSAL"] = params.causal ? "true" : "false";
  withCausal["G"] = std::to_string(params.heads / kvHeads(params));
  // Head dim 256: dK/dV's slots and the dS tile dQ's product reads from
  // shared memory exceed sm_90a's 227 KiB (and spill 30 KB without TMA);
  // the deterministic kernels run, and the plan line says so.
  const bool atomic = b.atomic =
      !params.deterministic && params.headDim <= 128;
  if (atomic)
    withCausal["ATOMIC_DQ"] = "true";
  struct Step {
    const char *name;
    const Defines *defines;
    Kernel *kernel;
    const char *block;
    unsigned *blockOut;
  } steps[] = {
      {"flash_bwd_preprocess", &common, &b.pre, "BM", &b.preBM},
      {"flash_bwd_dkdv", &withCausal, &b.dkdv, "BN", &b.dkdvBN},
      {atomic ? "flash_bwd_dq_cast" : "flash_bwd_dq",
       atomic ? &common : &withCausal, &b.dq, "BM", &b.dqBM},
  };
  std::string origins;
  for (Step &s : steps) {
    // The kernel's table for the arch, where there is one (the sm_90a
    // tables put K and V in shared memory: tma_a).
    KernelConfig config;
    std::string why;
    if (!ConfigTable::lookupIfPresent(
            fmt::format("{}/configs/{}.{}.json", dir, s.name, arch),
            *s.defines, params.seqlen, config, why))
      return Status::error("attention backward: cannot read the config "
                           "table: " + firstLine(why));
    Defines defines = config.defines;
    for (const auto &[k, v] : *s.defines)
      defines[k] = v;
    if (config.origin != "no table")
      origins += fmt::format("{}{}: {}", origins.empty() ? "" : "; ", s.name,
                             config.origin);
    auto k = compileAndLoad(*b.options.jit, device,
                            dir + "/" + s.name + ".tile", defines, "",
                            arch, config.schedule, s.name);
    if (!k)
      return k.status().withContext("attention backward");
    *s.kernel = k.take();
    *s.blockOut = manifestConstant(*s.kernel, s.block);
    if (*s.blockOut == 0)
      return Status::error(fmt::format("attention backward: {}'s manifest "
                                       "has no positive constant {}",
                                       s.name, s.block));
  }
  if (params.seqlen > 0) {
    auto delta = DeviceBuffer::allocate(
        device, std::size_t(params.batch) * params.heads * params.seqlen * 4);
    if (!delta)
      return delta.status().withContext("attention backward: delta");
    b.delta = delta.take();
  }
  if (atomic && params.seqlen > 0) {
    auto acc = DeviceBuffer::allocate(device, std::size_t(params.batch) *
                                                  params.heads *
                                                  params.seqlen *
                                                  params.headDim * 4);
    if (!acc)
      return acc.status().withContext("attention backward: dq_acc");
    b.dqAcc = acc.take();
    if (Status s = b.dqAcc.fill(0); !s.ok())
      return s.withContext("attention backward: dq_acc");
  }
  b.planLine = fmt::format(
      "attention backward: flash_bwd_preprocess, {} (BM={} BN={}, {}{}{}){}",
      atomic ? "flash_bwd_dkdv+atomic dQ, flash_bwd_dq_cast"
             : "flash_bwd_dkdv, flash_bwd_dq",
      b.dqBM, b.dkdvBN, arch, origins.empty() ? "" : "; ", origins,
      atomic == !params.deterministic
          ? ""
          : fmt::format("; deterministic: no atomic dQ at head dim {}",
                        params.headDim));
  if (b.options.log)
    b.options.log(b.planLine);
  else if (envFlag("TILEC_ATTENTION_LOG"))
    std::fprintf(stderr, "%s\n", b.planLine.c_str());
  return AttentionBackward(std::move(impl));
}

Status AttentionBackward::run() { return run(impl_->params); }

Status AttentionBackward::run(const AttentionBackwardParams &p) {
  Impl &b = *impl_;
  const AttentionBackwardParams &a = b.params;
  if (a.batch != p.batch || a.heads != p.heads || a.seqlen != p.seqlen ||
      a.headDim != p.headDim || a.dtype != p.dtype || a.layout != p.layout ||
      a.causal != p.causal || (p.scale != 0 && p.scale != a.scale) ||
      kvHeads(a) != kvHeads(p) || a.deterministic != p.deterministic)
    return Status::error(fmt::format(
        "attention backward: run: params differ from the plan's ({} B={} "
        "H={} H_kv={} S={} D={}{}{})",
        dtypeName(a.dtype), a.batch, a.heads, kvHeads(a), a.seqlen, a.headDim,
        a.causal ? " causal" : "",
        a.deterministic ? "" : " not deterministic"));
  for (DevicePtr ptr : {p.q, p.k, p.v, p.o, p.lse, p.dout, p.dq, p.dk, p.dv})
    if (!ptr)
      return Status::error("attention backward: run: q, k, v, o, lse, dout, "
                           "dq, dk and dv must all be set");
  if (a.seqlen == 0)
    return Status();
  const char *t = dtypeName(a.dtype);
  unsigned bh = unsigned(a.batch * a.heads);
  auto blocks = [&](unsigned block) { return ceilDiv(a.seqlen, block); };
  std::int32_t S = a.seqlen;
  KernelArg q = KernelArg::pointer(p.q, t), k = KernelArg::pointer(p.k, t),
            v = KernelArg::pointer(p.v, t), o = KernelArg::pointer(p.o, t),
            dout = KernelArg::pointer(p.dout, t),
            lse = KernelArg::pointer(p.lse, "f32"),
            delta = KernelArg::pointer(b.delta, "f32"),
            scale = KernelArg::float32(a.scale);
  KernelArg dqAcc = KernelArg::pointer(b.dqAcc.ptr(), "f32");
  Status s;
  if (b.dqAccDirty) // a run that stopped between dK/dV and the cast
    s = b.dqAcc.fill(0);
  if (b.options.nvtx)
    nvtxPush("attention: flash_bwd");
  if (s.ok())
    s = b.pre.launch({blocks(b.preBM), bh, 1},
                     {o, dout, delta, KernelArg::int32(S)}, p.stream);
  if (s.ok())
    s = b.dkdv.launch({blocks(b.dkdvBN), unsigned(a.batch * kvHeads(a)), 1},
                      {q, k, v, dout, lse, delta, KernelArg::pointer(p.dk, t),
                       KernelArg::pointer(p.dv, t), KernelArg::int32(S), scale,
                       dqAcc},
                      p.stream);
  if (s.ok() && b.atomic) {
    b.dqAccDirty = true;
    s = b.dq.launch({blocks(b.dqBM), bh, 1},
                    {dqAcc, KernelArg::pointer(p.dq, t), KernelArg::int32(S)},
                    p.stream);
    b.dqAccDirty = !s.ok();
  } else if (s.ok()) {
    s = b.dq.launch({blocks(b.dqBM), bh, 1},
                    {q, k, v, dout, lse, delta, KernelArg::pointer(p.dq, t),
                     KernelArg::int32(S), scale},
                    p.stream);
  }
  if (b.options.nvtx)
    nvtxPop();
  return s.withContext("attention backward");
}

const std::string &AttentionBackward::kernelName() const {
  return impl_->name;
}
const std::string &AttentionBackward::planLine() const {
  return impl_->planLine;
}
