//===- LaunchContractTest.cpp - no launch can break the CUDA context ------===//
//
//   tile-gpu-launch-contract
//
// JIT-compiles flash_fwd (sm_90a: TMA loads and 16-byte vector loads of Q),
// then launches it with Q one bf16 (2 bytes) into its buffer, as a slice of
// a packed QKV tensor would be: the launcher must refuse it with a message
// naming the argument and the alignment (the GPU would stop with
// CUDA_ERROR_MISALIGNED_ADDRESS, a sticky error that poisons the context).
// Then the aligned launch must run and synchronize, and write O.
//
// Exit: 0 passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "TestDevice.h"

#include "tile/JIT.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using namespace tile;

int main() {
  std::optional<Device> dev = tilegpu::openTestDevice();
  if (!dev)
    return tilegpu::kSkipExit;
  std::printf("tile-gpu-launch-contract: %s\n", dev->description().c_str());
  const char *path = std::getenv("TILEC_FLASH_FWD_TILE");
  std::string tile = path && *path ? path : TILEC_FLASH_FWD_TILE;
  JIT jit;
  Expected<CompiledKernelRef> compiled =
      jit.compileFile(tile, {{"D", "64"}}, "", dev->archString());
  if (!compiled) {
    std::printf("FAIL: compile: %s\n", compiled.error().c_str());
    return 1;
  }
  Expected<Kernel> kernel = jit.load(*dev, **compiled);
  if (!kernel) {
    std::printf("FAIL: load: %s\n", kernel.error().c_str());
    return 1;
  }
  const int S = 256, D = 64, BH = 4, BM = 64;
  std::size_t n = std::size_t(BH) * S * D;
  std::vector<DeviceBuffer> bufs;
  for (std::size_t bytes : {n * 2 + 16, n * 2, n * 2, n * 2, std::size_t(BH) * S * 4}) {
    Expected<DeviceBuffer> b = DeviceBuffer::allocate(*dev, bytes);
    if (!b || !b->fill(0).ok()) {
      std::printf("FAIL: allocate\n");
      return 1;
    }
    bufs.push_back(b.take());
  }
  auto args = [&](DevicePtr q) {
    return std::vector<KernelArg>{
        KernelArg::pointer(q, "bf16"), KernelArg::pointer(bufs[1], "bf16"),
        KernelArg::pointer(bufs[2], "bf16"), KernelArg::pointer(bufs[3], "bf16"),
        KernelArg::pointer(bufs[4], "f32"), KernelArg::int32(S),
        KernelArg::float32(0.125f)};
  };
  std::array<unsigned, 3> grid = {unsigned(S / BM), unsigned(BH), 1};
  bool ok = true;

  Status s = kernel->launch(grid, args(bufs[0].ptr() + 2));
  bool refused = !s.ok() && s.message().find("not 16-byte aligned") != std::string::npos &&
                 s.message().find("'q'") != std::string::npos;
  std::printf("%s: Q offset by 2 bytes is refused before the launch (%s)\n",
              refused ? "PASS" : "FAIL", s.ok() ? "launched" : s.message().c_str());
  ok &= refused;

  // The context is healthy: the aligned launch runs and O is written
  // (poisoned with 0xFF first: every element must change; all-zero inputs
  // give O = 0 and LSE = log(S)).
  if (!bufs[3].fill(0xFF).ok()) {
    std::printf("FAIL: fill\n");
    return 1;
  }
  s = kernel->launch(grid, args(bufs[0].ptr()));
  Status sync = s.ok() ? dev->synchronize() : s;
  std::vector<std::uint16_t> o(n);
  std::vector<float> lse(std::size_t(BH) * S);
  bool read = sync.ok() && bufs[3].download(o).ok() && bufs[4].download(lse).ok();
  bool written = read;
  for (std::uint16_t v : o)
    written &= v == 0;
  for (float v : lse)
    written &= std::fabs(v - std::log(float(S))) < 1e-3f;
  std::printf("%s: the aligned launch afterwards runs and writes O and LSE (%s)\n",
              written ? "PASS" : "FAIL",
              sync.ok() ? (read ? "synchronized" : "read back failed")
                        : sync.message().c_str());
  ok &= written;
  std::printf("%s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}
