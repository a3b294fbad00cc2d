//===- TilecC.cpp - the C API of include/tile/tilec_c.h -------------------===//
//
// Each handle owns one tile::Attention or tile::AttentionBackward. Every plan
// of the process compiles through one tile::JIT (one memory cache over the
// disk cache) and shares the tile::Device of its ordinal. C++ exceptions
// (std::bad_alloc) stop here and become errors: none crosses into C.
//
//===----------------------------------------------------------------------===//
#include "tile/tilec_c.h"

#include "tile/AttentionBackward.h"
#include "tile/Version.h"

#include <exception>
#include <map>
#include <memory>
#include <cstddef>
#include <mutex>
#include <type_traits>
#include <string>

using namespace tile;

struct tilec_attention_fwd {
  Attention attention;
  AttentionParams params; ///< the planned shape; run() sets the pointers
};
struct tilec_attention_bwd {
  AttentionBackward backward;
  AttentionBackwardParams params;
};

namespace {

thread_local std::string lastError;

int fail(const std::string &message) {
  lastError = message;
  return -1;
}

/// The shared JIT and the open devices, made on first use.
struct Shared {
  std::mutex mutex;
  std::shared_ptr<JIT> jit;
  std::map<int, Device> devices;
};

Shared &shared() {
  static Shared *s = new Shared(); // never destroyed: plans may outlive main
  return *s;
}

Expected<Device> deviceFor(int ordinal) {
  Shared &s = shared();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (auto it = s.devices.find(ordinal); it != s.devices.end())
    return Device(it->second);
  auto dev = Device::open(ordinal);
  if (!dev)
    return dev.status();
  s.devices.emplace(ordinal, *dev);
  return dev.take();
}

std::shared_ptr<JIT> jit() {
  Shared &s = shared();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.jit)
    s.jit = std::make_shared<JIT>();
  return s.jit;
}

/// A planned alibiSlopes / sinks: non-zero, never launched with (every run
/// passes its own pointers, or 0, which Attention::run refuses).
constexpr DevicePtr kPlanned = 16;

/// Checks the desc's size and enums; fills the shape fields of `p`.
template <typename Params>
std::string readDesc(const tilec_attention_desc *d, Params &p) {
  if (!d)
    return "the desc is NULL";
  // Version 1's desc ended at `flags`; its callers get the variants'
  // defaults.
  constexpr std::size_t v1 = offsetof(tilec_attention_desc, heads_kv);
  if (d->size < v1)
    return "desc.size " + std::to_string(d->size) + " is smaller than " +
           std::to_string(v1) + " (set it to sizeof(tilec_attention_desc))";
  if (d->dtype < TILEC_BF16 || d->dtype > TILEC_F32)
    return "desc.dtype " + std::to_string(d->dtype) +
           " is not TILEC_BF16, TILEC_F16 or TILEC_F32";
  if (d->layout != TILEC_BHSD && d->layout != TILEC_BSHD)
    return "desc.layout " + std::to_string(d->layout) +
           " is not TILEC_BHSD or TILEC_BSHD";
  if (d->causal != 0 && d->causal != 1)
    return "desc.causal must be 0 or 1";
  if (d->device < 0)
    return "desc.device must be >= 0";
  const DType dtypes[] = {DType::BF16, DType::F16, DType::F32};
  p.batch = d->batch;
  p.heads = d->heads;
  p.seqlen = d->seqlen;
  p.headDim = d->head_dim;
  p.dtype = dtypes[d->dtype];
  p.layout = d->layout == TILEC_BSHD ? AttentionLayout::BSHD
                                     : AttentionLayout::BHSD;
  p.causal = d->causal == 1;
  p.scale = d->scale;
  if constexpr (std::is_same_v<Params, AttentionBackwardParams>)
    p.deterministic = !(d->flags & TILEC_FLAG_ATOMIC_DQ);
  if (d->size < sizeof(tilec_attention_desc))
    return "";
  if (d->bottom_right != 0 && d->bottom_right != 1)
    return "desc.bottom_right must be 0 or 1";
  if ((d->alibi != 0 && d->alibi != 1) || (d->sinks != 0 && d->sinks != 1))
    return "desc.alibi and desc.sinks must be 0 or 1";
  if constexpr (std::is_same_v<Params, AttentionParams>) {
    p.headsKv = d->heads_kv;
    p.seqlenK = d->seqlen_k;
    p.bottomRight = d->bottom_right == 1;
    p.windowLeft = d->window_left;
    p.windowRight = d->window_right;
    p.softcap = d->softcap;
    // The plan needs only their presence; runs pass the pointers.
    p.alibiSlopes = d->alibi ? kPlanned : 0;
    p.sinks = d->sinks ? kPlanned : 0;
  } else if (d->seqlen_k != 0 || d->bottom_right || d->window_left != -1 ||
             d->window_right != -1 || d->softcap != 0 || d->alibi ||
             d->sinks) {
    return "the backward has no variants but GQA (seqlen_k, bottom_right, "
           "window_*, softcap, alibi, sinks must keep their defaults)";
  } else {
    p.headsKv = d->heads_kv;
  }
  return "";
}

AttentionOptions optionsFor(const tilec_attention_desc *d) {
  AttentionOptions o;
  o.jit = jit();
  if (d->flags & TILEC_FLAG_FORCE_REFERENCE)
    o.forceReference = true;
  o.policy = d->flags & TILEC_FLAG_NO_FALLBACK ? FallbackPolicy::Fail
             : d->flags & TILEC_FLAG_QUIET     ? FallbackPolicy::Fallback
                                               : FallbackPolicy::FallbackWarn;
  o.guardrail = (d->flags & TILEC_FLAG_GUARDRAIL) != 0;
  return o;
}

/// Runs `body` (returns 0 or fail(...)), turning exceptions into errors.
template <typename Body> int guarded(const char *what, Body body) {
  try {
    return body();
  } catch (const std::exception &e) {
    return fail(std::string(what) + ": " + e.what());
  } catch (...) {
    return fail(std::string(what) + ": unknown exception");
  }
}

/// One run of a forward plan on the call's pointers and stream.
int runForward(const char *what, tilec_attention_fwd *plan, uint64_t q,
               uint64_t k, uint64_t v, uint64_t o, uint64_t lse,
               uint64_t alibiSlopes, uint64_t sinks, void *stream) {
  if (!plan)
    return fail(std::string(what) + ": plan is NULL");
  return guarded(what, [&] {
    AttentionParams p = plan->params;
    p.q = q;
    p.k = k;
    p.v = v;
    p.o = o;
    p.lse = lse;
    p.alibiSlopes = alibiSlopes;
    p.sinks = sinks;
    p.stream = stream;
    Status s = plan->attention.run(p);
    return s.ok() ? 0 : fail(s.message());
  });
}

} // namespace

extern "C" {

const char *tilec_last_error(void) { return lastError.c_str(); }
const char *tilec_version(void) { return TILEC_VERSION_STRING; }
int tilec_api_version(void) { return TILEC_C_API_VERSION; }

int tilec_attention_fwd_create(const tilec_attention_desc *desc,
                               tilec_attention_fwd **out) {
  return guarded("tilec_attention_fwd_create", [&] {
    if (!out)
      return fail("tilec_attention_fwd_create: out is NULL");
    *out = nullptr;
    AttentionParams p;
    if (std::string why = readDesc(desc, p); !why.empty())
      return fail("tilec_attention_fwd_create: " + why);
    auto dev = deviceFor(desc->device);
    if (!dev)
      return fail(dev.error());
    auto a = Attention::plan(*dev, p, optionsFor(desc));
    if (!a)
      return fail(a.error());
    *out = new tilec_attention_fwd{a.take(), p};
    return 0;
  });
}

int tilec_attention_fwd_run(tilec_attention_fwd *plan, uint64_t q, uint64_t k,
                            uint64_t v, uint64_t o, uint64_t lse,
                            void *stream) {
  // No ALiBi slopes or sinks: a plan that needs them refuses the run.
  return runForward("tilec_attention_fwd_run", plan, q, k, v, o, lse, 0, 0,
                    stream);
}

int tilec_attention_fwd_run_variant(tilec_attention_fwd *plan, uint64_t q,
                                    uint64_t k, uint64_t v, uint64_t o,
                                    uint64_t lse, uint64_t alibi_slopes,
                                    uint64_t sinks, void *stream) {
  return runForward("tilec_attention_fwd_run_variant", plan, q, k, v, o, lse,
                    alibi_slopes, sinks, stream);
}

const char *tilec_attention_fwd_kernel_name(const tilec_attention_fwd *plan) {
  return plan ? plan->attention.kernelName().c_str() : "";
}

const char *tilec_attention_fwd_plan_line(const tilec_attention_fwd *plan) {
  return plan ? plan->attention.planLine().c_str() : "";
}

void tilec_attention_fwd_destroy(tilec_attention_fwd *plan) { delete plan; }

int tilec_attention_bwd_create(const tilec_attention_desc *desc,
                               tilec_attention_bwd **out) {
  return guarded("tilec_attention_bwd_create", [&] {
    if (!out)
      return fail("tilec_attention_bwd_create: out is NULL");
    *out = nullptr;
    AttentionBackwardParams p;
    if (std::string why = readDesc(desc, p); !why.empty())
      return fail("tilec_attention_bwd_create: " + why);
    auto dev = deviceFor(desc->device);
    if (!dev)
      return fail(dev.error());
    auto b = AttentionBackward::plan(*dev, p, optionsFor(desc));
    if (!b)
      return fail(b.error());
    *out = new tilec_attention_bwd{b.take(), p};
    return 0;
  });
}

int tilec_attention_bwd_run(tilec_attention_bwd *plan, uint64_t q, uint64_t k,
                            uint64_t v, uint64_t o, uint64_t lse,
                            uint64_t dout, uint64_t dq, uint64_t dk,
                            uint64_t dv, void *stream) {
  if (!plan)
    return fail("tilec_attention_bwd_run: plan is NULL");
  return guarded("tilec_attention_bwd_run", [&] {
    AttentionBackwardParams p = plan->params;
    p.q = q;
    p.k = k;
    p.v = v;
    p.o = o;
    p.lse = lse;
    p.dout = dout;
    p.dq = dq;
    p.dk = dk;
    p.dv = dv;
    p.stream = stream;
    Status s = plan->backward.run(p);
    return s.ok() ? 0 : fail(s.message());
  });
}

const char *tilec_attention_bwd_kernel_name(const tilec_attention_bwd *plan) {
  return plan ? plan->backward.kernelName().c_str() : "";
}

const char *tilec_attention_bwd_plan_line(const tilec_attention_bwd *plan) {
  return plan ? plan->backward.planLine().c_str() : "";
}

void tilec_attention_bwd_destroy(tilec_attention_bwd *plan) { delete plan; }

} // extern "C"
