//===- PersistentTest.cpp - every logical program of a persistent launch --===//
//
//   tile-gpu-persistent
//
// JIT-compiles a small persistent kernel in which each program writes its
// program_id and num_programs, launches it on a grid of many more programs
// than the GPU holds at once (so every resident program loops) and checks
// that every logical program wrote exactly its own coordinates and the
// logical grid's size, in the grid shapes below (programs take logical
// programs from a counter of the launch: a launch that found it not reset
// would leave programs unwritten). Then the same kernel with
// persistent = false, as the reference behaviour.
//
// Exit: 0 passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "TestDevice.h"

#include "tile/JIT.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using namespace tile;

namespace {

const char *kSource = R"(
kernel ids(out: ptr<i32>, sizes: ptr<i32>) {
  let x = program_id(0);
  let y = program_id(1);
  let z = program_id(2);
  let p = x + num_programs(0) * (y + num_programs(1) * z);
  let lane = iota(32);
  store(out + p * 32 + lane, lane * 0 + (x + 4096 * y + 16777216 * z));
  let size = where(lane == 0, num_programs(0),
                   where(lane == 1, num_programs(1), num_programs(2)));
  store(sizes + p * 4 + lane, size, mask: lane < 3);
}
)";

/// Launches `kernel` on `grid` and checks what every program wrote; prints
/// one PASS/FAIL line.
bool check(const Device &dev, const Kernel &kernel,
           std::array<unsigned, 3> grid, const std::string &what) {
  std::size_t programs = std::size_t(grid[0]) * grid[1] * grid[2];
  auto fail = [&](const std::string &why) {
    std::printf("FAIL: %s, grid (%u, %u, %u): %s\n", what.c_str(), grid[0],
                grid[1], grid[2], why.c_str());
    return false;
  };
  Expected<DeviceBuffer> out = DeviceBuffer::allocate(dev, programs * 32 * 4);
  Expected<DeviceBuffer> sizes = DeviceBuffer::allocate(dev, programs * 4 * 4);
  if (!out || !sizes)
    return fail(!out ? out.error() : sizes.error());
  if (Status s = out->fill(0xff); !s.ok())
    return fail(s.message());
  if (Status s = sizes->fill(0xff); !s.ok())
    return fail(s.message());
  Status s = kernel.launch(grid, {KernelArg::pointer(*out, "i32"),
                                  KernelArg::pointer(*sizes, "i32")});
  if (s.ok())
    s = dev.synchronize();
  if (!s.ok())
    return fail(s.message());
  std::vector<std::int32_t> o(programs * 32), n(programs * 4);
  if (Status d = out->download(o); !d.ok())
    return fail(d.message());
  if (Status d = sizes->download(n); !d.ok())
    return fail(d.message());
  for (std::size_t p = 0; p < programs; ++p) {
    std::int64_t x = p % grid[0], y = p / grid[0] % grid[1],
                 z = p / grid[0] / grid[1];
    std::int32_t want = std::int32_t(x + 4096 * y + 16777216 * z);
    for (int l = 0; l < 32; ++l)
      if (o[p * 32 + l] != want)
        return fail("program " + std::to_string(p) + " lane " +
                    std::to_string(l) + " wrote " +
                    std::to_string(o[p * 32 + l]) + ", expected " +
                    std::to_string(want));
    for (int d = 0; d < 3; ++d)
      if (n[p * 4 + d] != std::int32_t(grid[d]))
        return fail("program " + std::to_string(p) + " saw num_programs(" +
                    std::to_string(d) + ") = " + std::to_string(n[p * 4 + d]) +
                    ", expected " + std::to_string(grid[d]));
    if (n[p * 4 + 3] != -1)
      return fail("program " + std::to_string(p) + " wrote past its sizes");
  }
  std::printf("PASS: %s, grid (%u, %u, %u): %zu programs\n", what.c_str(),
              grid[0], grid[1], grid[2], programs);
  return true;
}

} // namespace

int main() {
  std::optional<Device> dev = tilegpu::openTestDevice();
  if (!dev)
    return tilegpu::kSkipExit;
  std::printf("tile-gpu-persistent: %s\n", dev->description().c_str());
  JIT jit;
  bool ok = true;
  for (const char *persistent : {"true", "false"}) {
    tile::Schedule schedule;
    schedule.numWarps = 1;
    schedule.persistent = std::string(persistent) == "true";
    Expected<CompiledKernelRef> compiled = jit.compileSource(
        kSource, "persistent_ids.tile", {}, "", dev->archString(), schedule);
    if (!compiled) {
      std::printf("FAIL: compile (persistent = %s): %s\n", persistent,
                  compiled.error().c_str());
      return 1;
    }
    Expected<Kernel> kernel = jit.load(*dev, **compiled);
    if (!kernel) {
      std::printf("FAIL: load (persistent = %s): %s\n", persistent,
                  kernel.error().c_str());
      return 1;
    }
    std::string what = std::string("persistent = ") + persistent;
    if (kernel->manifest().persistent != (persistent[0] == 't')) {
      std::printf("FAIL: %s: the manifest says persistent = %d\n",
                  what.c_str(), int(kernel->manifest().persistent));
      ok = false;
    }
    if (kernel->manifest().persistent)
      std::printf("# %u programs resident at once\n",
                  kernel->residentPrograms());
    // Many more programs than are resident (each loops), fewer than that,
    // a single one, and the large grid again: each launch takes its
    // programs from the counter the previous one left at 0.
    for (std::array<unsigned, 3> grid :
         {std::array<unsigned, 3>{1000, 20, 3}, {7, 5, 3}, {1, 1, 1},
          {1000, 20, 3}, {1000, 20, 3}}) {
      if (kernel->manifest().persistent && grid[0] == 1000 &&
          std::size_t(kernel->residentPrograms()) >= 60000) {
        std::printf("FAIL: %s: %u programs resident, the large grid would "
                    "not loop\n",
                    what.c_str(), kernel->residentPrograms());
        ok = false;
      }
      ok &= check(*dev, *kernel, grid, what);
    }
  }
  std::printf("%s\n", ok ? "tile-gpu-persistent: all passed"
                         : "tile-gpu-persistent: FAILED");
  return ok ? 0 : 1;
}
