//===- Run.cpp - launch the planned attention kernel, and the guardrail ---===//
//
// run() launches the planned kernel on the call's pointers and stream: no
// allocation, no host synchronisation. With the guardrail on, it then runs
// nonfinite_count / nonfinite_reduce over O (and q, k, v), waits for them on
// the stream (one event) and reads 8 bytes per tensor back; when O holds a
// NaN or inf and the policy allows, the reference kernel runs and O is
// checked again.
//
//===----------------------------------------------------------------------===//
#include "lib/Attention/AttentionImpl.h"

#include <fmt/format.h>

using namespace tile;
using namespace tile::attention_detail;

namespace {

/// The plan's shape against a run's.
std::string sameShape(const AttentionParams &a, const AttentionParams &b) {
  if (a.batch != b.batch || a.heads != b.heads || a.seqlen != b.seqlen ||
      a.headDim != b.headDim)
    return fmt::format("shape B={} H={} S={} D={} differs from the plan's "
                       "B={} H={} S={} D={}",
                       b.batch, b.heads, b.seqlen, b.headDim, a.batch,
                       a.heads, a.seqlen, a.headDim);
  if (a.dtype != b.dtype || a.layout != b.layout || a.causal != b.causal)
    return "dtype, layout or causality differs from the plan's";
  if (keysOf(a) != keysOf(b) || kvHeadsOf(a) != kvHeadsOf(b) ||
      a.bottomRight != b.bottomRight || a.windowLeft != b.windowLeft ||
      a.windowRight != b.windowRight || a.softcap != b.softcap)
    return "the variant (heads_kv, seqlen_k, window, softcap) differs from "
           "the plan's";
  if ((a.alibiSlopes != 0) != (b.alibiSlopes != 0) ||
      (a.sinks != 0) != (b.sinks != 0))
    return "alibiSlopes and sinks must be set in a run exactly when they "
           "were in the plan";
  if (b.scale != 0 && b.scale != a.scale)
    return "scale differs from the plan's";
  return "";
}

constexpr std::int32_t kNone = 2147483647; // nonfinite_count.tile: no row

} // namespace

void tile::attention_detail::locateRow(const AttentionParams &p,
                                       std::int64_t r, int &batch, int &head,
                                       int &row) {
  std::int64_t S = p.seqlen, H = p.heads;
  if (p.layout == AttentionLayout::BHSD) { // r = (b * H + h) * S + s
    row = int(r % S);
    head = int(r / S % H);
    batch = int(r / S / H);
  } else { // r = (b * S + s) * H + h
    head = int(r % H);
    row = int(r / H % S);
    batch = int(r / H / S);
  }
}

std::string GuardrailReport::str() const {
  if (!checked)
    return "guardrail off";
  if (!fired)
    return "guardrail: finite";
  std::string s = fmt::format("guardrail: {} holds {} non-finite value{}, "
                              "the first in batch {} head {} row {}",
                              tensor, count, count == 1 ? "" : "s", batch,
                              head, row);
  if (reran)
    s += finalClean ? "; the reference kernel's output is finite"
                    : "; the reference kernel's output is not finite either";
  return s;
}

Status Attention::Impl::launch(const Launchable &k, const AttentionParams &p) {
  const char *t = dtypeName(params.dtype);
  DevicePtr lse = p.lse ? p.lse : scratchLse.ptr();
  unsigned mb = ceilDiv(params.seqlen, k.bm);
  if (k.kind == Launchable::Kind::Variant)
    return k.kernel
        .launch({mb, unsigned(params.heads), unsigned(params.batch)},
                variantArgs(params, p, lse), p.stream)
        .withContext("attention: " + k.name);
  std::vector<KernelArg> args = {
      KernelArg::pointer(p.q, t),   KernelArg::pointer(p.k, t),
      KernelArg::pointer(p.v, t),   KernelArg::pointer(p.o, t),
      KernelArg::pointer(lse, "f32"), KernelArg::int32(params.seqlen)};
  if (k.kind != Launchable::Kind::FastBHSD)
    args.push_back(KernelArg::int32(params.heads));
  args.push_back(KernelArg::float32(params.scale));
  std::array<unsigned, 3> grid =
      k.kind == Launchable::Kind::FastBHSD
          ? std::array<unsigned, 3>{mb, unsigned(params.batch * params.heads),
                                    1}
          : std::array<unsigned, 3>{mb, unsigned(params.heads),
                                    unsigned(params.batch)};
  return k.kernel.launch(grid, args, p.stream)
      .withContext("attention: " + k.name);
}

Status Attention::Impl::check(const AttentionParams &p, bool inputs,
                              std::vector<TensorCheck> &checks) {
  std::vector<std::pair<const char *, DevicePtr>> tensors = {{"o", p.o}};
  if (inputs)
    tensors.insert(tensors.end(), {{"q", p.q}, {"k", p.k}, {"v", p.v}});
  const char *t = dtypeName(params.dtype);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    // q and o: B*H*S rows; k and v: B*H_kv*S_k.
    std::int32_t rows = i < 2 ? params.batch * params.heads * params.seqlen
                              : params.batch * kvHeadsOf(params) * keysOf(params);
    Status s = guard.count.launch(
        {guard.programs, 1, 1},
        {KernelArg::pointer(tensors[i].second, t), KernelArg::int32(rows),
         KernelArg::int32(params.headDim),
         KernelArg::pointer(guard.partial, "i32")},
        p.stream);
    if (s.ok())
      s = guard.reduce.launch(
          {1, 1, 1},
          {KernelArg::pointer(guard.partial, "i32"),
           KernelArg::int32(std::int32_t(guard.programs)),
           KernelArg::pointer(guard.out.ptr() + kGuardSlotBytes * i, "i32")},
          p.stream);
    if (!s.ok())
      return s.withContext("attention: guardrail");
  }
  // Wait for the checks on the caller's stream (an event: the copy below
  // runs on the legacy default stream, which need not order after it).
  Status s = guard.fence->start(p.stream);
  if (s.ok())
    s = guard.fence->stop(p.stream);
  if (s.ok())
    s = guard.fence->elapsedMs().status();
  std::int32_t host[4 * kGuardSlotBytes / 4] = {};
  if (s.ok())
    s = guard.out.copyToHost(host, kGuardSlotBytes * tensors.size());
  if (!s.ok())
    return s.withContext("attention: guardrail");
  checks.clear();
  for (std::size_t i = 0; i < tensors.size(); ++i)
    checks.push_back({tensors[i].first, host[kGuardSlotBytes / 4 * i],
                      host[kGuardSlotBytes / 4 * i + 1] == kNone
                          ? -1
                          : host[kGuardSlotBytes / 4 * i + 1]});
  return Status();
}

Status Attention::Impl::guardedRun(const AttentionParams &p) {
  GuardrailReport &g = last.guardrail;
  g.checked = true;
  bool inputs = options.guardrailInputs;
  std::vector<TensorCheck> checks;
  if (Status s = check(p, inputs, checks); !s.ok())
    return s;
  auto fire = [&](const TensorCheck &c) {
    g.fired = true;
    g.tensor = c.tensor;
    g.count = c.count;
    AttentionParams shape = params; // k and v: H_kv heads of S_k rows
    if (c.tensor == "k" || c.tensor == "v") {
      shape.heads = kvHeadsOf(params);
      shape.seqlen = keysOf(params);
    }
    locateRow(shape, c.firstRow, g.batch, g.head, g.row);
  };
  // Non-finite inputs: no kernel can help.
  for (std::size_t i = 1; i < checks.size(); ++i)
    if (checks[i].count) {
      fire(checks[i]);
      g.finalClean = checks[0].count == 0;
      std::string line = "attention: " + g.str() + " (an input: no rerun)";
      log(line, true);
      return Status::error(line);
    }
  if (!checks[0].count)
    return Status();
  fire(checks[0]);
  g.finalClean = false;
  std::string what = "attention: " + g.str() + " after " + active->name;
  bool canRerun = active != &reference && reference.loaded &&
                  options.policy != FallbackPolicy::Fail;
  if (!canRerun) {
    log(what, true);
    return Status::error(what);
  }
  log(what + "; rerunning " + reference.name,
      options.policy == FallbackPolicy::FallbackWarn);
  if (Status s = launch(reference, p); !s.ok())
    return s;
  last.kernel = reference.name;
  g.reran = true;
  if (Status s = check(p, false, checks); !s.ok())
    return s;
  g.finalClean = checks[0].count == 0;
  if (!g.finalClean) {
    std::string line = "attention: " + g.str();
    log(line, true);
    return Status::error(line);
  }
  return Status();
}

Status Attention::run() { return run(impl_->params); }

Status Attention::run(const AttentionParams &p) {
  Impl &impl = *impl_;
  if (std::string why = sameShape(impl.params, p); !why.empty())
    return Status::error("attention: run: " + why);
  if (!p.q || !p.k || !p.v || !p.o)
    return Status::error("attention: run: q, k, v and o must be set");
  impl.last = RunReport();
  impl.last.kernel = impl.active->name;
  if (impl.params.seqlen == 0)
    return Status();
  bool nvtx = impl.options.nvtx;
  if (nvtx)
    nvtxPush("attention: " + impl.active->name);
  Status s = impl.profiler.on() ? impl.profiler.begin(p.stream) : Status();
  if (s.ok())
    s = impl.launch(*impl.active, p);
  if (s.ok() && impl.profiler.on())
    s = impl.profiler.end(p.stream);
  if (s.ok() && impl.guardrail)
    s = impl.guardedRun(p);
  if (nvtx)
    nvtxPop();
  return s;
}
