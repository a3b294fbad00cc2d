//===- CacheConcurrencyTest.cpp - 8 processes share one cache directory ---===//
//
// Eight forked processes compile the same kernels into one directory, each
// in its own order and dropping its memory cache between rounds so that it
// reads entries other processes are writing. Every process must get intact
// kernels (no rejected entry), and afterwards every entry must verify.
//
//===----------------------------------------------------------------------===//

#include "FakeCompiler.h"
#include "TestUtil.h"
#include "tile/JIT.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

using namespace tile;
using tiletest::jitOptions;
using tiletest::contains;
using tiletest::FakeCompiler;
using tiletest::TempDir;

namespace {

constexpr int kProcesses = 8;
constexpr int kKernels = 12;
constexpr int kRounds = 3;

std::string source(int i) {
  // Large enough (~64 KiB) that writes and reads take more than one syscall.
  return "kernel k<D = 64>(x: ptr<f32>) {}\n// kernel " + std::to_string(i) +
         "\n//" + std::string(64 << 10, char('a' + i));
}

/// The child's work; its exit status: 0 when every kernel was intact.
int compileAll(const std::string &dir, int child) {
  FakeCompiler compiler;
  JIT jit(jitOptions(dir), compiler.fn());
  for (int round = 0; round < kRounds; ++round) {
    for (int j = 0; j < kKernels; ++j) {
      int i = (j + child * 5) % kKernels;
      auto k = jit.compileSource(source(i), "k.tile");
      if (!k || !contains((*k)->ptx, source(i)) ||
          (*k)->manifest.kernelName != "k")
        return 1;
    }
    jit.cache().clearMemory();
  }
  return jit.stats().diskRejected == 0 ? 0 : 2;
}

} // namespace

TEST(CacheConcurrency, EightProcessesShareOneDirectory) {
  TempDir tmp;
  std::vector<pid_t> children;
  for (int c = 0; c < kProcesses; ++c) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::alarm(120); // a hang ends the child, and the test fails
      ::_exit(compileAll(tmp.path(), c));
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status)) << "child " << pid << " was killed";
    EXPECT_EQ(WEXITSTATUS(status), 0)
        << "child " << pid << (WEXITSTATUS(status) == 2
                                   ? ": rejected an entry"
                                   : ": got a damaged kernel");
  }

  FakeCompiler compiler;
  JIT jit(jitOptions(tmp.path()), compiler.fn());
  for (int i = 0; i < kKernels; ++i) {
    auto k = jit.compileSource(source(i), "k.tile");
    ASSERT_TRUE(k) << k.error();
    EXPECT_TRUE(contains((*k)->ptx, source(i))) << i;
  }
  EXPECT_EQ(jit.stats().diskHits, unsigned(kKernels));
  EXPECT_EQ(jit.stats().compilations, 0u);
  EXPECT_EQ(jit.stats().diskRejected, 0u);
  for (const auto &f : std::filesystem::directory_iterator(tmp.path()))
    EXPECT_FALSE(contains(f.path().filename().string(), ".tmp."))
        << "left behind: " << f.path();
}
