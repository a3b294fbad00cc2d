//===- JIT.cpp - tile::compile + KernelCache + runtime load ---------------===//

#include "tile/JIT.h"

#include "lib/JIT/Imports.h"

namespace tile {

namespace {
KernelCache::Options cacheOptions(const JITOptions &o) {
  KernelCache::Options c;
  c.dir = o.cacheDir;
  c.disk = o.diskCache;
  c.debug = o.debug;
  return c;
}
} // namespace

JIT::JIT(JITOptions options, CompileFn compiler)
    : options_(std::move(options)), cache_(cacheOptions(options_)) {
  options_.compiler = std::move(compiler);
  ptxas_ = options_.cubin ? findPtxas(options_.ptxasPath) : std::string();
  cudaVersion_ = ptxasVersion(ptxas_);
}

Expected<std::string> JIT::resolveArch(const std::string &arch) {
  if (!arch.empty())
    return arch;
  if (!options_.arch.empty())
    return options_.arch;
  if (deviceArch_.empty()) {
    Expected<Device> dev = Device::open(0);
    if (!dev)
      return Status::error("JIT: cannot pick a target arch (set "
                           "JITOptions::arch to compile without a GPU): " +
                           dev.error());
    deviceArch_ = dev->archString();
  }
  return deviceArch_;
}

Expected<std::string> JIT::keyFor(const std::string &source,
                                  const Defines &defines,
                                  const std::string &kernel,
                                  const std::string &arch,
                                  const Schedule &schedule,
                                  const std::string &name) {
  Expected<std::string> target = resolveArch(arch);
  if (!target)
    return target;
  CacheKeyInputs in;
  in.source = source;
  in.imports = importedSources(source, name, options_.includeDirs);
  in.defines = defines;
  in.kernel = kernel;
  in.arch = *target;
  in.schedule = schedule.str();
  in.tilecVersion = builtTilecVersion();
  in.llvmVersion = builtLLVMVersion();
  in.cudaVersion = cudaVersion_;
  return cacheKey(in);
}

Expected<CompiledKernelRef> JIT::compileSource(const std::string &source,
                                               const std::string &name,
                                               const Defines &defines,
                                               const std::string &kernel,
                                               const std::string &arch,
                                               const Schedule &schedule) {
  Expected<std::string> target = resolveArch(arch);
  if (!target)
    return target.status();
  Expected<std::string> key = keyFor(source, defines, kernel, *target, schedule, name);
  if (!key)
    return key.status();

  return cache_.getOrBuild(*key, [&]() -> Expected<CompiledKernel> {
    CompileOptions opts;
    opts.arch = *target;
    opts.defines = defines;
    opts.schedule = schedule;
    opts.kernel = kernel;
    opts.ptxasPath = ptxas_;
    opts.includeDirs = options_.includeDirs;
    EmitStage stage = ptxas_.empty() ? EmitStage::PTX : EmitStage::Cubin;
    CompileResult r = options_.compiler(source, name, opts, stage);
    if (!r.ok) {
      std::string diag =
          r.diagnostics.empty() ? "(no diagnostics)" : r.diagnostics;
      while (!diag.empty() && diag.back() == '\n')
        diag.pop_back();
      return Status::error("compiling " + name + " for " + *target +
                           " failed:\n" + diag);
    }
    if (r.ptx.empty())
      return Status::error("compiling " + name +
                           ": the compiler reported success but no PTX");
    CompiledKernel k;
    k.manifest = r.manifest;
    k.ptx = std::move(r.ptx);
    k.cubin = std::move(r.cubin);
    return k;
  });
}

Expected<CompiledKernelRef> JIT::compileFile(const std::string &path,
                                             const Defines &defines,
                                             const std::string &kernel,
                                             const std::string &arch,
                                             const Schedule &schedule) {
  std::string source, error;
  if (!readFile(path, source, error))
    return Status::error(error);
  return compileSource(source, path, defines, kernel, arch, schedule);
}

Expected<Kernel> JIT::load(const Device &device,
                           const CompiledKernel &compiled) {
  return Kernel::load(device, compiled.manifest, compiled.ptx, compiled.cubin);
}

Expected<Kernel> JIT::loadFile(const Device &device, const std::string &path,
                               const Defines &defines,
                               const std::string &kernel,
                               const Schedule &schedule) {
  Expected<CompiledKernelRef> compiled =
      compileFile(path, defines, kernel, device.archString(), schedule);
  if (!compiled)
    return compiled.status();
  return load(device, **compiled);
}

} // namespace tile
