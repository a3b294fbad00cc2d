// add_jit: compile add.tile at run time with tile::JIT, then launch it.
// Exit 0: passed, or no GPU (after the compile, which needs none).
#include "common.h"

#include "tile/JIT.h"
#include "tile/Version.h"

#include <cstdio>

int main() {
  std::printf("tilec %s (%s)\n", TILEC_VERSION_STRING,
              tile::versionString().c_str());

  // 1. Compile for sm_80 without a GPU: only the compiler library is needed.
  tile::JITOptions options;
  options.diskCache = false; // leave the user's cache alone
  options.arch = "sm_80";
  tile::JIT jit(options);
  auto compiled = jit.compileFile(ADD_TILE, {{"BLOCK", "256"}});
  if (!compiled) {
    std::fprintf(stderr, "compile failed: %s\n", compiled.error().c_str());
    return 1;
  }
  std::printf("compiled kernel '%s' for %s: %zu bytes of PTX, %d threads\n",
              (*compiled)->manifest.kernelName.c_str(),
              (*compiled)->manifest.arch.c_str(), (*compiled)->ptx.size(),
              (*compiled)->manifest.blockSize);

  // 2. Run it where there is a GPU.
  auto dev = tile::Device::open();
  if (!dev) {
    std::printf("no GPU: %s\n", dev.error().c_str());
    return 0;
  }
  auto kernel = jit.loadFile(*dev, ADD_TILE, {{"BLOCK", "256"}});
  if (!kernel) {
    std::fprintf(stderr, "load failed: %s\n", kernel.error().c_str());
    return 1;
  }
  return runAdd(*dev, *kernel);
}
