// lib/Target/InterleaveExp.cpp on small PTX snippets: the order it gives,
// what it does not cross, and the multiply-adds-per-ex2 gate.
#include "lib/Target/InterleaveExp.h"

#include <gtest/gtest.h>
#include <sstream>
#include <vector>

using tile::target::interleaveExpChains;

namespace {
std::string ex2(const std::string &d, const std::string &x) {
  return "\t// begin inline asm\n\tex2.approx.ftz.f32 " + d + ", " + x +
         ";\n\t// end inline asm\n";
}

/// The instructions of `ptx` (no comments), trimmed, in order.
std::vector<std::string> instructions(const std::string &ptx) {
  std::vector<std::string> out;
  std::istringstream in(ptx);
  for (std::string l; std::getline(in, l);) {
    size_t b = l.find_first_not_of(" \t");
    if (b == std::string::npos || l.compare(b, 2, "//") == 0)
      continue;
    size_t op = l.find_first_of(" \t", b);
    size_t args = l.find_first_not_of(" \t", op);
    out.push_back(l.substr(b, op - b) + " " + l.substr(args));
  }
  return out;
}

const std::string kSoftmax = "\tmax.f32 \t%r9, %r1, %r2;\n"
                             "\tfma.rn.f32 \t%r3, %r1, %r8, %r9;\n"
                             "\tfma.rn.f32 \t%r4, %r2, %r8, %r9;\n" +
                             ex2("%r5", "%r3") + ex2("%r6", "%r4") +
                             "\tadd.rn.f32 \t%r7, %r5, %r6;\n"
                             "\tcvt.rn.bf16x2.f32 \t%r10, %r6, %r5;\n";
/// The pass applies to `ptx` and keeps its order of instructions.
void expectOrderKept(std::string ptx) {
  std::vector<std::string> before = instructions(ptx);
  ASSERT_TRUE(interleaveExpChains(ptx));
  EXPECT_EQ(instructions(ptx), before);
}
} // namespace

TEST(InterleaveExp, EachFmaSitsWithItsEx2AndTheSumFollows) {
  std::string ptx = kSoftmax;
  ASSERT_TRUE(interleaveExpChains(ptx));
  std::vector<std::string> want = {
      "max.f32 %r9, %r1, %r2;",        "fma.rn.f32 %r4, %r2, %r8, %r9;",
      "ex2.approx.ftz.f32 %r6, %r4;",  "fma.rn.f32 %r3, %r1, %r8, %r9;",
      "ex2.approx.ftz.f32 %r5, %r3;",  "cvt.rn.bf16x2.f32 %r10, %r6, %r5;",
      "add.rn.f32 %r7, %r5, %r6;"};
  EXPECT_EQ(instructions(ptx), want);
}

TEST(InterleaveExp, NothingCrossesABarrier) {
  expectOrderKept("\tfma.rn.f32 \t%r3, %r1, %r8, %r9;\n"
                  "\tbar.sync \t1, 256;\n" +
                  ex2("%r5", "%r3") + "\tadd.rn.f32 \t%r7, %r5, %r5;\n");
}

TEST(InterleaveExp, AnFmaStopsWhereItsSourceIsRewritten) {
  // %r1 is written again before the ex2: the fma must read the old value.
  expectOrderKept("\tfma.rn.f32 \t%r3, %r1, %r8, %r9;\n"
                  "\tmov.b32 \t%r1, %r20;\n" +
                  ex2("%r5", "%r3") + "\tadd.rn.f32 \t%r7, %r5, %r1;\n");
}

TEST(InterleaveExp, OffWhereProductsDominate) {
  // Two m64n256k16 wgmma: 2 * 64*256*16/128 = 4096 multiply-adds per thread
  // for 2 ex2, far above 192 per ex2: the PTX stays as it is.
  std::string ptx = "\twgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%r1}, %rd1, %rd2;\n"
                    "\twgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%r1}, %rd1, %rd2;\n" +
                    kSoftmax;
  std::string before = ptx;
  EXPECT_FALSE(interleaveExpChains(ptx));
  EXPECT_EQ(ptx, before);
  std::string none = "\tadd.rn.f32 \t%r7, %r5, %r6;\n";
  EXPECT_FALSE(interleaveExpChains(none));
}
