//===- VarlenTest.cpp - GPU parity of the packed varlen forward -----------===//
//
//   tile-gpu-varlen [--seed N] [--tile PATH] [--only NAME] [--quick]
//
// JIT-compiles examples/attention/flash_fwd_varlen.tile
// ($TILEC_FLASH_FWD_VARLEN_TILE, $TILEC_SOURCE_DIR/examples/..., --tile) for
// the GPU's arch, for every (dtype, causal, head dim) and schedule below, and
// checks it against an fp64 CPU reference run sequence by sequence
// (docs/testing.md). The batch is packed: cu_seqlens_q from lengths that
// include 0 (twice, one of them first), 1, lengths that are not multiples
// of any block, one longer than 2k, and a total over 4k; a few random odd
// lengths are added per seed. Every batch runs twice: with the keys of
// each sequence its queries (self-attention, cu_seqlens_k = cu_seqlens_q),
// and with key lengths of their own (a cached prefix of 0 to 300 keys
// before the queries, a sequence with fewer keys than queries, one with
// none): causal is then bottom-right, and a query that sees no key must
// give O = 0 and LSE = -inf. Every case:
//   * O and LSE are poisoned with NaN (0xFF bytes) first; every row of every
//     sequence must be written (finite), and the guard rows after the
//     packed total (H * total rows) must stay 0xFF;
//   * the inputs' guard rows hold NaN too: a key past a sequence's end that
//     leaked into the softmax or P·V would make the output NaN;
//   * per sequence, rel-L2 <= 1e-2 (f16, bf16) / 1e-5 (f32) and LSE within
//     1e-3 (1e-5) * (1 + |lse|), so a short sequence cannot hide behind
//     long ones;
//   * three launches give bitwise-equal O and LSE.
// Then a batch of only empty sequences (total 0, a real launch of one
// query block per program): nothing may be written.
//
// Chunked prefill (examples/attention/flash_fwd_paged.tile,
// $TILEC_FLASH_FWD_PAGED_TILE): the batch with key lengths of their own, its
// keys in a paged cache (PagedCache.h: pages shuffled, NaN in every row no
// sequence owns, block-table entries past a sequence's pages outside the
// pool), checked the same way; MQA over pages of 16 and one KV head per
// query head over pages of 64.
//
// Schedules: the kernel's defaults everywhere; on sm_90a also 8 warps with
// BM = BN = 128, a producer warpgroup, persistent programs, and all three
// together (the benchmark's schedule). A schedule
// (or f32) the compiler refuses is reported as "SKIP" with its reason; the
// defaults in 16-bit must compile.
//
// Exit: 0 all passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "Cases.h"
#include "PagedCache.h"
#include "Reference.h"
#include "SourcePath.h"
#include "TestOptions.h"
#include "TestDevice.h"

#include "tile/JIT.h"
#include "tile/Runtime.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace tile;
using namespace tilegpu;

namespace {


/// A schedule to run every config under.
struct Sched {
  std::string name;
  Defines defines;      ///< block sizes the schedule wants
  std::string schedule; ///< Schedule::parse pairs
};

std::vector<Sched> schedulesFor(const std::string &arch) {
  std::vector<Sched> s = {{"default", {}, ""}};
  if (arch == "sm_90a") {
    s.push_back({"8warps", {{"BM", "128"}, {"BN", "128"}}, "num_warps=8"});
    s.push_back({"producer", {{"BM", "128"}, {"BN", "128"}},
                 "num_warps=8,producer"});
    s.push_back({"persistent", {}, "persistent"});
    // The benchmark's: TMA rings inside the loop over programs, where
    // query blocks past their sequence's end walk no key block.
    s.push_back({"persistent-producer", {{"BM", "128"}, {"BN", "128"}},
                 "num_warps=8,producer,persistent"});
  }
  return s;
}

/// One packed batch with its fp64 reference.
struct Packed {
  int heads = 0, d = 0;
  bool causal = false;
  std::vector<int> lens, cu; ///< queries; cu = prefix sums, cu[0] = 0
  std::vector<int> lensK, cuK; ///< keys, the same
  int total = 0, maxLen = 0, totalK = 0;
  std::vector<float> q;               ///< [H, total, D], rounded to the dtype
  std::vector<float> k, v;            ///< [H, totalK, D]
  std::vector<double> oRef, lseRef;   ///< [H, total, D], [H, total]
};

/// Key lengths of their own for `lens`: a cached prefix of 0 to 300 keys
/// before most sequences' queries, fewer keys than queries in one (some
/// causal rows see no key), none in another.
std::vector<int> makeKeyLengths(std::mt19937_64 &rng, const std::vector<int> &lens) {
  std::uniform_int_distribution<int> prefix(0, 300);
  std::vector<int> keys;
  for (int len : lens)
    keys.push_back(len + prefix(rng));
  for (std::size_t b = 0, shorter = 0, none = 0; b < lens.size(); ++b) {
    if (lens[b] > 64 && !shorter) {
      keys[b] = lens[b] / 2; // the first half of the queries see nothing
      shorter = 1;
    } else if (lens[b] > 1 && !none) {
      keys[b] = 0;
      none = 1;
    }
  }
  return keys;
}

/// Lengths with the shapes the brief asks for, plus `extra` random odd ones.
std::vector<int> makeLengths(std::mt19937_64 &rng, bool quick) {
  std::vector<int> lens = {0, 1, 2053, 0, 63, 130, 1025, 777, 333};
  if (quick)
    lens = {0, 1, 300, 0, 63, 130};
  std::uniform_int_distribution<int> pick(1, 300);
  for (int i = 0; i < (quick ? 1 : 3); ++i)
    lens.push_back(pick(rng) | 1);
  // 0 and 1 stay first; the second 0 and the rest move per seed.
  std::shuffle(lens.begin() + 2, lens.end(), rng);
  return lens;
}

/// `lensK` empty: self-attention (the keys are the queries' tokens).
/// `group` > 1: the keys and values of the heads of a group are equal (head
/// (h / group) * group's), so that a GQA kernel reading one KV head per
/// group has the same reference.
Packed makePacked(std::mt19937_64 &rng, DType t, int d, bool causal,
                  int heads, const std::vector<int> &lens,
                  const std::vector<int> &lensK = {}, int group = 1) {
  Packed p;
  p.heads = heads;
  p.d = d;
  p.causal = causal;
  p.lens = lens;
  p.lensK = lensK.empty() ? lens : lensK;
  p.cu = {0};
  p.cuK = {0};
  for (std::size_t b = 0; b < lens.size(); ++b) {
    p.cu.push_back(p.cu.back() + lens[b]);
    p.cuK.push_back(p.cuK.back() + p.lensK[b]);
    p.maxLen = std::max(p.maxLen, lens[b]);
  }
  p.total = p.cu.back();
  p.totalK = p.cuK.back();
  std::size_t n = std::size_t(heads) * p.total * d;
  std::size_t nk = std::size_t(heads) * p.totalK * d;
  p.q = randomNormal(rng, n);
  p.k = randomNormal(rng, nk);
  p.v = randomNormal(rng, nk);
  roundTo(t, p.q);
  roundTo(t, p.k);
  roundTo(t, p.v);
  const std::size_t headElems = std::size_t(p.totalK) * d;
  for (int h = 0; h < heads; ++h)
    if (h % group) {
      std::size_t from = std::size_t(h - h % group) * headElems;
      std::copy_n(p.k.begin() + from, headElems, p.k.begin() + h * headElems);
      std::copy_n(p.v.begin() + from, headElems, p.v.begin() + h * headElems);
    }
  p.oRef.assign(n, 0.0);
  p.lseRef.assign(std::size_t(heads) * p.total, 0.0);
  // Each sequence is an ordinary [H, len, D] problem.
  for (std::size_t b = 0; b < lens.size(); ++b) {
    int len = lens[b], lenK = p.lensK[b];
    if (!len)
      continue;
    Problem prob{heads, len, d, causal, float(1.0 / std::sqrt(double(d))), lenK};
    std::size_t rowElems = std::size_t(len) * d;
    std::size_t keyElems = std::size_t(lenK) * d;
    std::vector<float> qs(heads * rowElems), ks(heads * keyElems), vs(ks.size());
    for (int h = 0; h < heads; ++h) {
      std::size_t from = (std::size_t(h) * p.total + p.cu[b]) * d;
      std::size_t fromK = (std::size_t(h) * p.totalK + p.cuK[b]) * d;
      std::copy_n(p.q.begin() + from, rowElems, qs.begin() + h * rowElems);
      std::copy_n(p.k.begin() + fromK, keyElems, ks.begin() + h * keyElems);
      std::copy_n(p.v.begin() + fromK, keyElems, vs.begin() + h * keyElems);
    }
    std::vector<double> o(heads * rowElems, 0.0), lse(std::size_t(heads) * len, -INFINITY);
    if (lenK) // no key at all: O = 0, LSE = -inf
      referenceAttention(prob, qs, ks, vs, o, lse);
    for (int h = 0; h < heads; ++h) {
      std::size_t row0 = std::size_t(h) * p.total + p.cu[b];
      std::copy_n(o.begin() + h * rowElems, rowElems,
                  p.oRef.begin() + row0 * d);
      std::copy_n(lse.begin() + std::size_t(h) * len, len,
                  p.lseRef.begin() + row0);
    }
  }
  return p;
}

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2e", x);
  return buf;
}

/// Device buffers of one batch; every buffer has `guardRows` rows after
/// the packed ones, filled with 0xFF (NaN).
struct DeviceBatch {
  DeviceBuffer q, k, v, o, lse, cu, cuK;
  std::size_t rows = 0; ///< H * total
  const PagedCache *paged = nullptr; ///< flash_fwd_paged.tile's cache
  DeviceBuffer kc, vc, table, seqLens;
};

/// The paged cache of `pc` and the key lengths on the device.
Status uploadPaged(const Device &dev, DType t, const Packed &p,
                   const PagedCache &pc, DeviceBatch &db) {
  db.paged = &pc;
  auto put = [&](DeviceBuffer &buf, const void *host, std::size_t bytes) {
    Expected<DeviceBuffer> x = DeviceBuffer::allocate(dev, bytes);
    if (!x)
      return x.status();
    buf = x.take();
    return buf.copyFromHost(host, bytes);
  };
  std::vector<std::uint8_t> k = encode(t, pc.k), v = encode(t, pc.v);
  if (Status s = put(db.kc, k.data(), k.size()); !s.ok())
    return s;
  if (Status s = put(db.vc, v.data(), v.size()); !s.ok())
    return s;
  if (Status s = put(db.table, pc.table.data(), pc.table.size() * 4); !s.ok())
    return s;
  return put(db.seqLens, p.lensK.data(), p.lensK.size() * 4);
}

Status upload(const Device &dev, DType t, const Packed &p, int guardRows,
              DeviceBatch &db) {
  std::size_t eb = dtypeBytes(t);
  db.rows = std::size_t(p.heads) * p.total;
  std::size_t elems = (db.rows + guardRows) * p.d;
  std::size_t elemsK = (std::size_t(p.heads) * p.totalK + guardRows) * p.d;
  for (DeviceBuffer *b : {&db.q, &db.k, &db.v, &db.o}) {
    bool key = b == &db.k || b == &db.v;
    Expected<DeviceBuffer> x = DeviceBuffer::allocate(dev, (key ? elemsK : elems) * eb);
    if (!x)
      return x.status();
    *b = x.take();
  }
  Expected<DeviceBuffer> lse =
      DeviceBuffer::allocate(dev, (db.rows + guardRows) * 4);
  Expected<DeviceBuffer> cu = DeviceBuffer::allocate(dev, p.cu.size() * 4);
  Expected<DeviceBuffer> cuK = DeviceBuffer::allocate(dev, p.cuK.size() * 4);
  if (!lse || !cu || !cuK)
    return !lse ? lse.status() : !cu ? cu.status() : cuK.status();
  db.lse = lse.take();
  db.cu = cu.take();
  db.cuK = cuK.take();
  if (Status s = db.cuK.copyFromHost(p.cuK.data(), p.cuK.size() * 4); !s.ok())
    return s;
  for (auto [buf, host] : {std::pair{&db.q, &p.q}, std::pair{&db.k, &p.k},
                           std::pair{&db.v, &p.v}}) {
    if (Status s = buf->fill(0xFF); !s.ok()) // NaN guard rows
      return s;
    std::vector<std::uint8_t> bytes = encode(t, *host);
    if (Status s = buf->copyFromHost(bytes.data(), bytes.size()); !s.ok())
      return s;
  }
  return db.cu.copyFromHost(p.cu.data(), p.cu.size() * 4);
}

/// Poisons O and LSE, launches, waits, reads both back whole.
Status launchOnce(const Device &dev, const Kernel &kernel, DType t,
                  const Packed &p, int bm, DeviceBatch &db,
                  std::vector<std::uint8_t> &o, std::vector<std::uint8_t> &lse) {
  if (Status s = db.o.fill(0xFF); !s.ok())
    return s;
  if (Status s = db.lse.fill(0xFF); !s.ok())
    return s;
  const char *tn = dtypeName(t);
  std::vector<KernelArg> args;
  if (db.paged)
    args = {KernelArg::pointer(db.q, tn),      KernelArg::pointer(db.kc, tn),
            KernelArg::pointer(db.vc, tn),     KernelArg::pointer(db.o, tn),
            KernelArg::pointer(db.lse, "f32"), KernelArg::pointer(db.cu, "i32"),
            KernelArg::pointer(db.table, "i32"),
            KernelArg::pointer(db.seqLens, "i32"),
            KernelArg::int32(p.total),         KernelArg::int32(p.heads),
            KernelArg::int32(db.paged->maxBlocks),
            KernelArg::float32(float(1.0 / std::sqrt(double(p.d))))};
  else
    args = {
      KernelArg::pointer(db.q, tn),      KernelArg::pointer(db.k, tn),
      KernelArg::pointer(db.v, tn),      KernelArg::pointer(db.o, tn),
      KernelArg::pointer(db.lse, "f32"), KernelArg::pointer(db.cu, "i32"),
      KernelArg::pointer(db.cuK, "i32"), KernelArg::int32(p.total),
      KernelArg::int32(p.totalK),        KernelArg::int32(p.heads),
      KernelArg::float32(float(1.0 / std::sqrt(double(p.d))))};
  // At least one query block, so an all-empty batch really launches.
  unsigned gx = unsigned(std::max(1, (p.maxLen + bm - 1) / bm));
  std::array<unsigned, 3> grid = {gx, unsigned(p.lens.size() * p.heads), 1};
  if (Status s = kernel.launch(grid, args); !s.ok())
    return s;
  if (Status s = dev.synchronize(); !s.ok())
    return s.withContext("after the launch");
  o.resize(db.o.size());
  lse.resize(db.lse.size());
  if (Status s = db.o.copyToHost(o.data(), o.size()); !s.ok())
    return s;
  return db.lse.copyToHost(lse.data(), lse.size());
}

bool untouched(const std::vector<std::uint8_t> &b, std::size_t from) {
  return std::all_of(b.begin() + std::ptrdiff_t(from), b.end(),
                     [](std::uint8_t x) { return x == 0xFF; });
}

/// Runs one batch on `kernel` and reports one line.
void runBatch(const Device &dev, const Kernel &kernel, int bm, DType t,
              const Packed &p, const std::string &head, Totals &totals,
              const PagedCache *paged = nullptr) {
  const int guardRows = 256;
  DeviceBatch db;
  if (Status s = upload(dev, t, p, guardRows, db); !s.ok())
    return report(totals, head, false, s.message());
  if (paged)
    if (Status s = uploadPaged(dev, t, p, *paged, db); !s.ok())
      return report(totals, head, false, s.message());
  std::vector<std::uint8_t> o0, lse0, o, lse;
  int differing = 0;
  for (int r = 0; r < 3; ++r) {
    Status s = launchOnce(dev, kernel, t, p, bm, db, r ? o : o0, r ? lse : lse0);
    if (!s.ok()) {
      report(totals, head, false, "run " + std::to_string(r) + ": " + s.message());
      totals.fatal = true; // a fault leaves the context unusable
      return;
    }
    if (r && !differing && (o != o0 || lse != lse0))
      differing = r;
  }
  std::size_t eb = dtypeBytes(t);
  std::string why;
  bool pass = true;
  auto fail = [&](const std::string &w) {
    pass = false;
    why += (why.empty() ? "" : "; ") + w;
  };
  if (!untouched(o0, db.rows * p.d * eb))
    fail("O written past the packed total (guard rows)");
  if (!untouched(lse0, db.rows * 4))
    fail("LSE written past the packed total (guard rows)");
  if (differing)
    fail("run " + std::to_string(differing) + " differs bitwise from run 0");

  const double tol = t == DType::F32 ? 1e-5 : 1e-2;
  const double lseTol = t == DType::F32 ? 1e-5 : 1e-3;
  std::vector<float> out = decode(t, o0.data(), db.rows * p.d);
  std::vector<float> lseOut = decode(DType::F32, lse0.data(), db.rows);
  double worstRel = 0, worstLse = 0;
  for (std::size_t b = 0; b < p.lens.size(); ++b) {
    int len = p.lens[b];
    if (!len)
      continue;
    // This sequence's rows in every head, against the reference; a row
    // that sees no key (reference LSE -inf) must be O = 0 and LSE = -inf
    // exactly, and is checked apart.
    std::vector<float> got, gotLse;
    std::vector<double> ref, refLse;
    int blind = 0, blindWrong = 0;
    for (int h = 0; h < p.heads; ++h) {
      std::size_t row0 = std::size_t(h) * p.total + p.cu[b];
      for (std::size_t r = row0; r < row0 + std::size_t(len); ++r) {
        auto o = out.begin() + std::ptrdiff_t(r * p.d);
        if (std::isinf(p.lseRef[r])) {
          ++blind;
          bool zero = std::all_of(o, o + p.d, [](float x) { return x == 0.f; });
          blindWrong += !(zero && std::isinf(lseOut[r]) && lseOut[r] < 0);
          continue;
        }
        got.insert(got.end(), o, o + p.d);
        ref.insert(ref.end(), p.oRef.begin() + std::ptrdiff_t(r * p.d),
                   p.oRef.begin() + std::ptrdiff_t((r + 1) * p.d));
        gotLse.push_back(lseOut[r]);
        refLse.push_back(p.lseRef[r]);
      }
    }
    std::string seq = "sequence " + std::to_string(b) + " (" +
                      std::to_string(len) + " queries, " +
                      std::to_string(p.lensK[b]) + " keys)";
    if (blindWrong)
      fail(seq + ": " + std::to_string(blindWrong) + " of " +
           std::to_string(blind) +
           " rows that see no key are not O = 0, LSE = -inf");
    if (got.empty())
      continue;
    ErrorStats e = compare(got, ref), le = compareScaled(gotLse, refLse);
    std::size_t seen = got.size() / std::size_t(p.d);
    if (e.nonFinite)
      fail(seq + ": " + std::to_string(e.nonFinite) +
           " O elements not written or NaN, first in checked row " +
           std::to_string(e.firstNonFinite / p.d) + " of " + std::to_string(seen));
    if (le.nonFinite)
      fail(seq + ": " + std::to_string(le.nonFinite) +
           " LSE values not written or NaN");
    if (!e.nonFinite && e.relL2 > tol)
      fail(seq + ": rel-L2 " + fmt(e.relL2) + " > " + fmt(tol));
    if (!le.nonFinite && le.maxAbs > lseTol)
      fail(seq + ": LSE error " + fmt(le.maxAbs) + " > " + fmt(lseTol) +
           "*(1+|lse|)");
    worstRel = std::max(worstRel, e.relL2);
    worstLse = std::max(worstLse, le.maxAbs);
  }
  report(totals, head + " rel-L2 " + fmt(worstRel) + " lse-err " + fmt(worstLse),
         pass, why);
}

/// A batch of empty sequences: every program returns at once, nothing is
/// written.
void runEmptyBatch(const Device &dev, const Kernel &kernel, int bm, DType t,
                   int d, const std::string &head, Totals &totals) {
  std::mt19937_64 rng(1);
  Packed p = makePacked(rng, t, d, false, 2, {0, 0, 0});
  DeviceBatch db;
  if (Status s = upload(dev, t, p, 64, db); !s.ok())
    return report(totals, head, false, s.message());
  std::vector<std::uint8_t> o, lse;
  Status s = launchOnce(dev, kernel, t, p, bm, db, o, lse);
  if (!s.ok())
    totals.fatal = true;
  report(totals, head, s.ok() && untouched(o, 0) && untouched(lse, 0),
         s.ok() ? "" : s.message());
}

} // namespace

int main(int argc, char **argv) {
  TestOptions opt;
  opt.tilePath = sourcePath("TILEC_FLASH_FWD_VARLEN_TILE", "examples/attention/flash_fwd_varlen.tile", TILEC_FLASH_FWD_VARLEN_TILE);
  const std::string pagedPath = sourcePath("TILEC_FLASH_FWD_PAGED_TILE", "examples/attention/flash_fwd_paged.tile", TILEC_FLASH_FWD_PAGED_TILE);
  if (!parseTestOptions(argc, argv, opt, true, "bf16_causal_d128/producer"))
    return 2;
  std::optional<Device> dev = openTestDevice();
  if (!dev)
    return kSkipExit;
  std::printf("tile-gpu-varlen: %s, arch %s, seed %llu (rerun: --seed %llu)\n"
              "kernel: %s\n",
              dev->description().c_str(), dev->archString().c_str(), opt.seed,
              opt.seed, opt.tilePath.c_str());
  std::mt19937_64 rng(opt.seed);
  std::vector<int> lens = makeLengths(rng, opt.quick);
  std::vector<int> lensK = makeKeyLengths(rng, lens);
  std::printf("lengths (queries/keys):");
  for (std::size_t b = 0; b < lens.size(); ++b)
    std::printf(" %d/%d", lens[b], lensK[b]);
  std::printf("\n");

  JIT jit;
  Totals totals;
  const int heads = 3;
  for (DType t : {DType::BF16, DType::F16, DType::F32})
    for (int d : {64, 128})
      for (bool causal : {false, true}) {
        std::string config = std::string(dtypeName(t)) +
                             (causal ? "_causal" : "_full") + "_d" +
                             std::to_string(d);
        bool any = (config + "/paged").find(opt.only) != std::string::npos ||
                   opt.only.find(config + "/paged") == 0;
        for (const Sched &s : schedulesFor(dev->archString()))
          any |= (config + "/" + s.name).find(opt.only) != std::string::npos;
        if (!any || (opt.quick && d == 128))
          continue;
        Packed self = makePacked(rng, t, d, causal, heads, lens);
        Packed own = makePacked(rng, t, d, causal, heads, lens, lensK);
        for (const Sched &s : schedulesFor(dev->archString())) {
          std::string name = config + "/" + s.name;
          if (name.find(opt.only) == std::string::npos)
            continue;
          Defines defines = s.defines;
          defines["T"] = dtypeName(t);
          defines["D"] = std::to_string(d);
          defines["CAUSAL"] = causal ? "true" : "false";
          tile::Schedule schedule;
          if (std::string why = schedule.parse(s.schedule); !why.empty()) {
            report(totals, name + " schedule", false, why);
            continue;
          }
          Expected<CompiledKernelRef> compiled = jit.compileFile(
              opt.tilePath, defines, "", dev->archString(), schedule);
          if (!compiled) {
            bool mustCompile = t != DType::F32 && s.name == "default";
            std::string msg = compiled.error();
            msg = msg.substr(0, msg.find('\n'));
            if (mustCompile) {
              report(totals, name + " compile", false, compiled.error());
            } else {
              std::printf("%s SKIP (the compiler refuses this schedule: %s)\n",
                          name.c_str(), msg.c_str());
            }
            continue;
          }
          Expected<Kernel> kernel = jit.load(*dev, **compiled);
          int bm = 0;
          std::string error;
          if (!kernel) {
            report(totals, name + " load", false, kernel.error());
            continue;
          }
          if (!blockRows(kernel->manifest(), bm, error)) {
            report(totals, name + " manifest", false, error);
            continue;
          }
          for (const Packed *p : {&self, &own}) {
            char head[160];
            std::snprintf(head, sizeof(head), "%-28s q %5d k %5d", name.c_str(),
                          p->total, p->totalK);
            if (!totals.fatal)
              runBatch(*dev, *kernel, bm, t, *p, head, totals);
          }
          if (!totals.fatal)
            runEmptyBatch(*dev, *kernel, bm, t, d, name + " empty batch",
                          totals);
          if (totals.fatal) {
            std::printf("stopped early: a launch failed, the CUDA context is "
                        "unusable\n");
            goto done;
          }
        }
        // Chunked prefill (flash_fwd_paged.tile): the same queries against
        // their keys in a shuffled paged cache, MQA (one KV head for the
        // three query heads) over pages of 16, then pages of 64.
        for (auto [page, group] : {std::pair{16, heads}, std::pair{64, 1}}) {
          std::string name = config + "/paged" + std::to_string(page) +
                             "_g" + std::to_string(group);
          if (name.find(opt.only) == std::string::npos)
            continue;
          Packed grouped = makePacked(rng, t, d, causal, heads, lens, lensK, group);
          PagedCache pc = makePagedCache(rng, grouped.k, grouped.v, heads, d,
                                         grouped.cuK, page, group);
          Defines defines = {{"T", dtypeName(t)}, {"D", std::to_string(d)},
                             {"CAUSAL", causal ? "true" : "false"},
                             {"PAGE", std::to_string(page)},
                             {"G", std::to_string(group)}};
          Expected<CompiledKernelRef> compiled = jit.compileFile(
              pagedPath, defines, "", dev->archString(), tile::Schedule{});
          if (!compiled) {
            if (t == DType::F32)
              std::printf("%s SKIP (%s)\n", name.c_str(),
                          compiled.error().substr(0, compiled.error().find('\n')).c_str());
            else
              report(totals, name + " compile", false, compiled.error());
            continue;
          }
          Expected<Kernel> kernel = jit.load(*dev, **compiled);
          int bm = 0;
          std::string error;
          if (!kernel || !blockRows(kernel->manifest(), bm, error)) {
            report(totals, name + " load", false, kernel ? error : kernel.error());
            continue;
          }
          char head[160];
          std::snprintf(head, sizeof(head), "%-28s q %5d k %5d pages %d",
                        name.c_str(), grouped.total, grouped.totalK, pc.numPages);
          runBatch(*dev, *kernel, bm, t, grouped, head, totals, &pc);
          if (totals.fatal)
            goto done;
        }
      }
done:
  return summarize(totals, opt.seed, opt.only);
}
