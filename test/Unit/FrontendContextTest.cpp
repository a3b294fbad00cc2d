//===- FrontendContextTest.cpp - the frontend loads the dialects it uses --===//
//
// buildModule must work in a context that has loaded nothing (or only the
// tile dialect, as the fuzzer's did): it creates arith, scf, func, math and
// tile ops, and creating an op of an unloaded dialect dereferenced null (the
// fuzzer's crash in genFma on a scalar fma).
//
//===----------------------------------------------------------------------===//

#include "dialects/tile/TileDialect.h"
#include "lib/Frontend/Frontend.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

namespace {

/// Every kind of op the frontend creates: math.fma of runtime scalars,
/// arith and tile ops, an scf.for loop, the func.func kernel.
const char *kSource = R"(kernel k(o: ptr<f32>, s: f32, t: f32, u: f32, n: i32) {
  let r = iota(32);
  var acc = fma(s, t, u);
  for i in range(0, n) {
    acc = acc + 1.0;
  }
  store(o + r, fma(acc, t, u));
}
)";

/// The printed module, or the diagnostics when it did not build.
std::string build(mlir::MLIRContext &context, bool &ok) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(kSource, "k.tile"), llvm::SMLoc());
  std::string out;
  llvm::raw_string_ostream os(out);
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, os);
  tile::frontend::FrontendOptions options;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      tile::frontend::buildModule(context, sourceMgr, options);
  ok = bool(module);
  if (module)
    module->print(os);
  return out;
}

} // namespace

TEST(FrontendContext, FreshContextBuildsScalarFma) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  bool ok = false;
  std::string out = build(context, ok);
  ASSERT_TRUE(ok) << out;
  EXPECT_NE(out.find("math.fma"), std::string::npos) << out;
  EXPECT_NE(out.find("scf.for"), std::string::npos) << out;
}

TEST(FrontendContext, TileDialectOnlyAsTheFuzzerLoads) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<mlir::tile::TileDialect>();
  bool ok = false;
  std::string out = build(context, ok);
  ASSERT_TRUE(ok) << out;
  EXPECT_NE(out.find("math.fma"), std::string::npos) << out;
}
