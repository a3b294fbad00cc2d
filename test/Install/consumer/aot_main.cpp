// add_aot: load the bundle tilec wrote at build time and launch it. Links
// only the runtime (no LLVM). Exit 0: passed, or no GPU.
#include "common.h"

#include <cstdio>
#include <string>

int main(int argc, char **argv) {
  std::string bundle = argc > 1 ? argv[1] : ADD_BUNDLE;
  tile::Manifest manifest;
  std::string text, error;
  if (!tile::readFile(bundle + ".manifest.json", text, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  if (!tile::Manifest::fromJSON(text, manifest, error)) {
    std::fprintf(stderr, "%s.manifest.json: %s\n", bundle.c_str(),
                 error.c_str());
    return 1;
  }
  std::printf("bundle %s: kernel '%s' for %s, %zu parameters\n",
              bundle.c_str(), manifest.kernelName.c_str(),
              manifest.arch.c_str(), manifest.params.size());

  auto dev = tile::Device::open();
  if (!dev) {
    std::printf("no GPU: %s\n", dev.error().c_str());
    return 0;
  }
  auto kernel = tile::loadBundle(*dev, bundle);
  if (!kernel) {
    std::fprintf(stderr, "load failed: %s\n", kernel.error().c_str());
    return 1;
  }
  return runAdd(*dev, *kernel);
}
