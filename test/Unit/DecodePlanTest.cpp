//===- DecodePlanTest.cpp - tile::Decode's checks, on the fake driver -----===//
//
// The scale a plan or a run takes must be finite and >= 0 (0: 1/sqrt(D)):
// decode.tile requires sm_scale > 0 at launch, and the host API refuses a
// bad one first, with the forward's wording. The kernels come from a fake
// compiler (their parameter lists as decode.tile and decode_combine.tile
// declare them), so a run launches on the fake driver.
//
//===----------------------------------------------------------------------===//
#include "tile/Decode.h"
#include "FakeCuda.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace tile;
using tiletest::contains;
using tiletest::fake;
using tiletest::fakePath;
using tiletest::ScopedEnv;

namespace {

std::string kernelDir() {
  if (const char *src = std::getenv("TILEC_SOURCE_DIR"); src && *src)
    return std::string(src) + "/examples/attention";
  return TILEC_ATTENTION_DIR;
}

CompileFn fakeDecodeCompiler() {
  return [](const std::string &source, const std::string &,
            const CompileOptions &o, EmitStage) {
    std::size_t at = source.find("\nkernel ");
    at = at == std::string::npos ? 0 : at + 8;
    std::string name = source.substr(at, source.find_first_of("<( ", at) - at);
    std::string pt = "ptr<" + o.defines.at("T") + ">";
    CompileResult r;
    Manifest &m = r.manifest;
    if (name == "decode")
      m.params = {{"q", pt},          {"k_cache", pt},
                  {"v_cache", pt},    {"block_table", "ptr<i32>"},
                  {"seq_lens", "ptr<i32>"}, {"o", pt},
                  {"lse", "ptr<f32>"}, {"o_part", "ptr<f32>"},
                  {"lse_part", "ptr<f32>"}, {"num_kv_heads", "i32"},
                  {"max_blocks", "i32"}, {"num_splits", "i32"},
                  {"sm_scale", "f32"}};
    else
      m.params = {{"o_part", "ptr<f32>"}, {"lse_part", "ptr<f32>"},
                  {"o", pt},             {"lse", "ptr<f32>"},
                  {"rows", "i32"},       {"num_splits", "i32"}};
    m.constants = o.defines;
    m.kernelName = name;
    m.blockSize = 128;
    m.arch = o.arch;
    m.sourceHash = hashHex(source);
    r.ok = true;
    r.ptx = "// fake\n.visible .entry " + name + "(\n)\n{\n ret;\n}\n";
    return r;
  };
}

TEST(DecodePlanTest, ScaleMustBeFiniteAndNotNegative) {
  ScopedEnv driver("TILEC_CUDA_DRIVER", fakePath());
  ASSERT_TRUE(fake());
  auto dev = Device::open();
  ASSERT_TRUE(dev.ok()) << dev.error();
  JITOptions j;
  j.diskCache = false;
  j.cubin = false;
  j.debug = [](const std::string &) {};
  DecodeOptions opts{std::make_shared<JIT>(j, fakeDecodeCompiler()),
                     kernelDir()};
  DecodeParams p;
  p.batch = 2;
  p.kvHeads = 2;
  p.headDim = 128;
  p.maxBlocks = 4;
  p.splits = 1;
  for (float bad : {-0.125f, std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    DecodeParams q = p;
    q.scale = bad;
    auto d = Decode::plan(*dev, q, opts);
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(contains(d.error(), "must be finite and >= 0")) << d.error();
  }
  // A good plan; runs with a bad scale are refused before any launch.
  auto d = Decode::plan(*dev, p, opts);
  ASSERT_TRUE(d.ok()) << d.error();
  std::vector<DeviceBuffer> bufs;
  DevicePtr *ptrs[] = {&p.q, &p.kCache, &p.vCache, &p.seqLens, &p.o,
                       &p.blockTable};
  for (DevicePtr *ptr : ptrs) {
    auto b = DeviceBuffer::allocate(*dev, 1 << 16);
    ASSERT_TRUE(b.ok()) << b.error();
    *ptr = b->ptr();
    bufs.push_back(b.take());
  }
  int before = fake()->launches;
  DecodeParams q = p;
  q.scale = -1.0f;
  Status s = d->run(q);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.message(), "scale -1 must be finite")) << s.message();
  EXPECT_EQ(fake()->launches, before);
  q.scale = 0.5f;
  ASSERT_TRUE(d->run(q).ok());
  EXPECT_EQ(fake()->launches, before + 1); // one split: no combine
}

} // namespace
