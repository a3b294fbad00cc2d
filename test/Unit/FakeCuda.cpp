//===- FakeCuda.cpp - a fake libcuda for runtime error-path tests ---------===//

#include "FakeCuda.h"
#include "lib/Runtime/CudaApi.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace {
FakeCudaState state;
/// Live cuMemAlloc allocations: base → the size asked for.
std::map<unsigned long long, std::size_t> allocations;

std::string mode() {
  const char *m = std::getenv("FAKECUDA_MODE");
  return m ? m : "";
}

/// Bytes of each parameter the first `.entry` of a PTX image declares
/// (`.param .u64 a`, `.param .u32 b`, `.param .align 64 .b8 map[128]`):
/// what the real driver reads of each kernelParams entry. Empty when the
/// image declares none.
std::vector<unsigned> declaredParamBytes(const std::string &image) {
  std::vector<unsigned> bytes;
  std::size_t entry = image.find(".entry ");
  std::size_t open = image.find('(', entry);
  std::size_t close = image.find(')', open);
  if (entry == std::string::npos || open == std::string::npos ||
      close == std::string::npos)
    return bytes;
  std::string list = image.substr(open + 1, close - open - 1);
  // `.param [.align N] .TYPE [.ptr .global .align N] NAME[[COUNT]]`
  static const std::regex decl(R"(\.param\s[^,]*?\.[usbf](8|16|32|64)\b)"
                               R"([^,\[]*(\[(\d+)\])?)");
  for (std::sregex_iterator it(list.begin(), list.end(), decl), end;
       it != end; ++it) {
    unsigned size = unsigned(std::stoul((*it)[1].str())) / 8;
    unsigned count =
        (*it)[3].matched ? unsigned(std::stoul((*it)[3].str())) : 1;
    bytes.push_back(size * count);
  }
  return bytes;
}

struct FakeModule {
  std::string image;
  std::vector<unsigned> paramBytes; ///< declaredParamBytes(image)
};

/// The bytes of a loaded image: a 64-bit ELF (a real cubin, from ptxas) up
/// to the end of its section headers, so that its string table (the kernel
/// names) is searchable; else text up to the first NUL.
std::string imageBytes(const char *image) {
  if (image[0] != 0x7f || std::strncmp(image + 1, "ELF", 3) != 0 ||
      image[4] != 2)
    return std::string(image);
  std::uint64_t shoff;
  std::uint16_t shentsize, shnum;
  std::memcpy(&shoff, image + 0x28, 8);
  std::memcpy(&shentsize, image + 0x3A, 2);
  std::memcpy(&shnum, image + 0x3C, 2);
  return std::string(image, shoff + std::uint64_t(shentsize) * shnum);
}

const char *errorName(int e) {
  switch (e) {
  case 0:
    return "CUDA_SUCCESS";
  case 1:
    return "CUDA_ERROR_INVALID_VALUE";
  case 2:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case 100:
    return "CUDA_ERROR_NO_DEVICE";
  case 218:
    return "CUDA_ERROR_INVALID_PTX";
  case 500:
    return "CUDA_ERROR_NOT_FOUND";
  default:
    return nullptr;
  }
}

const char *errorString(int e) {
  switch (e) {
  case 0:
    return "no error";
  case 1:
    return "invalid argument";
  case 2:
    return "out of memory";
  case 100:
    return "no CUDA-capable device is detected";
  case 218:
    return "a PTX JIT compilation failed";
  case 500:
    return "named symbol not found";
  default:
    return nullptr;
  }
}

void writeLog(int n, int *opts, void **vals, int bufOpt, int sizeOpt,
              const char *text) {
  char *buf = nullptr;
  std::size_t size = 0;
  for (int i = 0; i < n; ++i) {
    if (opts[i] == bufOpt)
      buf = static_cast<char *>(vals[i]);
    if (opts[i] == sizeOpt)
      size = reinterpret_cast<std::size_t>(vals[i]);
  }
  if (buf && size) {
    std::strncpy(buf, text, size - 1);
    buf[size - 1] = 0;
  }
}
} // namespace

// The entry points take the runtime's driver types (CudaApi.h): calling a
// function through a pointer of another type is undefined, and UBSan's
// -fsanitize=function reports it (scripts/sanitize.sh).
using tile::detail::CUcontext;
using tile::detail::CUevent;
using tile::detail::CUfunction;
using tile::detail::CUmodule;
using tile::detail::CUstream;
using tile::detail::CUtensorMap;

extern "C" {
FakeCudaState *fakecuda_state() { return &state; }

int cuInit(unsigned) { return mode() == "noinit" ? 100 : 0; }
int cuDriverGetVersion(int *v) {
  *v = 12040;
  return 0;
}
int cuDeviceGetCount(int *n) {
  *n = mode() == "nodevices" ? 0 : 1;
  return 0;
}
int cuDeviceGet(int *d, int ordinal) {
  if (ordinal != 0)
    return 1;
  *d = 0;
  return 0;
}
int cuDeviceGetName(char *name, int len, int) {
  std::strncpy(name, "Fake GPU", len);
  return 0;
}
int cuDeviceGetAttribute(int *v, int attr, int) {
  std::string m = mode();
  bool sm80 = m == "sm80";
  int major = sm80 ? 8 : m == "sm75" ? 7 : m == "sm100" ? 10 : 9;
  int minor = m == "sm75" ? 5 : 0;
  switch (attr) {
  case 1:
    *v = 1024;
    return 0;
  case 16:
    *v = 132;
    return 0;
  case 75:
    *v = major;
    return 0;
  case 76:
    *v = minor;
    return 0;
  case 97:
    *v = sm80 ? 166912 : 232448;
    return 0;
  default:
    return 1;
  }
}
int cuDevicePrimaryCtxRetain(CUcontext *ctx, int) {
  ++state.retains;
  *ctx = reinterpret_cast<CUcontext>(&state);
  return 0;
}
int cuDevicePrimaryCtxRelease_v2(int) {
  ++state.releases;
  return 0;
}
int cuCtxSetCurrent(CUcontext) { return 0; }
int cuCtxSynchronize() {
  ++state.ctxSyncs;
  return 0;
}

int cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned n, int *opts,
                       void **vals) {
  const char *text = static_cast<const char *>(image);
  bool cubin = std::strncmp(text, "FAKECUBIN", 9) == 0;
  std::strcpy(state.lastImageKind, cubin ? "cubin" : "ptx");
  if (std::strncmp(text, "BAD", 3) == 0) {
    writeLog(int(n), opts, vals, 5, 6,
             "ptxas application ptx input, line 1; error   : fake ptxas "
             "error: unknown directive 'BAD'");
    return 218;
  }
  ++state.modulesLoaded;
  *mod = reinterpret_cast<CUmodule>(
      new FakeModule{imageBytes(text), declaredParamBytes(text)});
  return 0;
}
int cuModuleUnload(CUmodule mod) {
  ++state.modulesUnloaded;
  delete reinterpret_cast<FakeModule *>(mod);
  return 0;
}
int cuModuleGetFunction(CUfunction *fn, CUmodule mod, const char *name) {
  auto *m = reinterpret_cast<FakeModule *>(mod);
  if (m->image.find(name) == std::string::npos)
    return 500;
  *fn = reinterpret_cast<CUfunction>(mod);
  return 0;
}
int cuFuncGetAttribute(int *v, int attr, CUfunction) {
  *v = attr == 1 ? state.staticShared : 0;
  return 0;
}
int cuFuncSetAttribute(CUfunction, int attr, int value) {
  if (attr == 8)
    state.maxDynamicShared = value;
  return 0;
}
int cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction, int block,
                                                std::size_t smem) {
  state.occupancyBlockSize = block;
  state.occupancyShared = int(smem);
  if (state.programsPerSM < 0)
    return 1;
  *n = state.programsPerSM ? state.programsPerSM : 1;
  return 0;
}
int cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                   unsigned by, unsigned bz, unsigned smem, CUstream,
                   void **params, void **) {
  if (state.failLaunch && state.launches + 1 == state.failLaunch) {
    ++state.launches;
    return 1; // CUDA_ERROR_INVALID_VALUE
  }
  ++state.launches;
  state.grid[0] = gx;
  state.grid[1] = gy;
  state.grid[2] = gz;
  state.block[0] = bx;
  state.block[1] = by;
  state.block[2] = bz;
  state.sharedMem = smem;
  state.paramCount = 0;
  std::memset(state.tailParams, 0, sizeof(state.tailParams));
  // Read no more of an entry than the kernel declares (4 bytes of an i32 or
  // of the persistent grid), as the driver does; undeclared entries are read
  // as 8 bytes, or as 128 from tailParamsFrom on.
  const auto *module = reinterpret_cast<const FakeModule *>(fn);
  for (int i = 0; params && i < 64 && params[i]; ++i) {
    bool declared = module && std::size_t(i) < module->paramBytes.size();
    unsigned bytes = declared ? module->paramBytes[i] : 0;
    if (i < 16) {
      state.params[i] = 0;
      std::memcpy(&state.params[i], params[i],
                  declared ? std::min(bytes, 8u) : 8);
    }
    int tail = i - state.tailParamsFrom;
    if (state.tailParamsFrom > 0 && tail >= 0 && tail < 4)
      std::memcpy(state.tailParams[tail], params[i],
                  declared ? std::min(bytes, 128u) : 128);
    state.paramCount = i + 1;
  }
  FakeLaunch &log = state.launchLog[(state.launches - 1) % 8];
  std::memcpy(log.grid, state.grid, sizeof(log.grid));
  log.paramCount = state.paramCount;
  std::memcpy(log.params, state.params, sizeof(log.params));
  return 0;
}

int cuMemAlloc_v2(unsigned long long *p, std::size_t bytes) {
  if (bytes == 0)
    return 1;
  if (bytes > (std::size_t(1) << 40))
    return 2;
  ++state.allocs;
  // Poisoned, as real device memory holds whatever was there: a test that
  // expects zeros sees them only where something wrote them.
  std::size_t rounded = (bytes + 255) / 256 * 256;
  void *mem = std::aligned_alloc(256, rounded);
  std::memset(mem, 0xA5, rounded);
  *p = reinterpret_cast<unsigned long long>(mem);
  state.lastAllocPtr = *p;
  state.lastAllocBytes = bytes;
  allocations[*p] = bytes;
  state.liveAllocs = int(allocations.size());
  return 0;
}
int cuMemFree_v2(unsigned long long p) {
  ++state.frees;
  allocations.erase(p);
  state.liveAllocs = int(allocations.size());
  std::free(reinterpret_cast<void *>(p));
  return 0;
}
int cuMemGetAddressRange_v2(unsigned long long *base, std::size_t *size,
                            unsigned long long p) {
  // Not in an allocation: CUDA_ERROR_NOT_FOUND, as the real driver answers
  // (seen on an H100 with driver 580: host and unmapped addresses alike).
  auto it = allocations.upper_bound(p); // the first allocation after p
  if (it == allocations.begin())
    return 500;
  --it;
  if (p >= it->first + it->second)
    return 500;
  if (base)
    *base = it->first;
  if (size)
    *size = it->second;
  return 0;
}

int cuTensorMapEncodeTiled(CUtensorMap *map, int dataType, unsigned rank,
                           void *address, const std::uint64_t *globalDim,
                           const std::uint64_t *globalStrides,
                           const unsigned *boxDim,
                           const unsigned *elementStrides, int interleave,
                           int swizzle, int l2Promotion, int oobFill) {
  int n = state.tensorMapEncodes++;
  FakeTensorMapCall &c = state.tensorMapCalls[n % 8];
  c = FakeTensorMapCall{};
  c.dataType = dataType;
  c.rank = rank;
  c.address = reinterpret_cast<unsigned long long>(address);
  for (unsigned d = 0; d < rank && d < 2; ++d) {
    c.globalDim[d] = globalDim[d];
    c.boxDim[d] = boxDim[d];
    c.elementStrides[d] = elementStrides[d];
  }
  if (rank >= 2)
    c.globalStrides[0] = globalStrides[0];
  c.interleave = interleave;
  c.swizzle = swizzle;
  c.l2Promotion = l2Promotion;
  c.oobFill = oobFill;
  c.mapAligned = reinterpret_cast<std::uintptr_t>(map) % 64 == 0;
  if (state.tensorMapEncodeFails)
    return 1;
  auto *bytes = reinterpret_cast<unsigned char *>(map);
  std::memset(bytes, 0xA5, 128);
  std::uint64_t tag = 0x7e450000ull + std::uint64_t(n);
  std::memcpy(bytes, &c.address, 8);
  std::memcpy(bytes + 8, &tag, 8);
  return 0;
}
int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, std::size_t n) {
  std::memcpy(reinterpret_cast<void *>(dst), src, n);
  return 0;
}
int cuMemcpyDtoH_v2(void *dst, unsigned long long src, std::size_t n) {
  std::memcpy(dst, reinterpret_cast<void *>(src), n);
  return 0;
}
int cuMemsetD8_v2(unsigned long long dst, unsigned char v, std::size_t n) {
  std::memset(reinterpret_cast<void *>(dst), v, n);
  return 0;
}

int cuEventCreate(CUevent *e, unsigned) {
  *e = reinterpret_cast<CUevent>(new int(0));
  return 0;
}
int cuEventRecord(CUevent, CUstream) { return 0; }
int cuEventSynchronize(CUevent) { return 0; }
int cuEventElapsedTime(float *ms, CUevent, CUevent) {
  *ms = 1.5f;
  return 0;
}
int cuEventDestroy_v2(CUevent e) {
  delete reinterpret_cast<int *>(e);
  return 0;
}

int cuGetErrorName(int e, const char **s) {
  *s = errorName(e);
  return *s ? 0 : 1;
}
int cuGetErrorString(int e, const char **s) {
  *s = errorString(e);
  return *s ? 0 : 1;
}
} // extern "C"
