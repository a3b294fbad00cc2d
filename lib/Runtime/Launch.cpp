//===- Launch.cpp - typed launch arguments, launch, tensor maps -----------===//

#include "CudaApi.h"
#include "Requires.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace tile {

using namespace detail;

KernelArg KernelArg::pointer(DevicePtr p, std::string elementType) {
  KernelArg a;
  a.kind = Kind::Pointer;
  a.elementType = std::move(elementType);
  a.value.ptr = p;
  return a;
}

KernelArg KernelArg::int32(std::int32_t v) {
  KernelArg a;
  a.kind = Kind::I32;
  a.value.i32 = v;
  return a;
}

KernelArg KernelArg::int64(std::int64_t v) {
  KernelArg a;
  a.kind = Kind::I64;
  a.value.i64 = v;
  return a;
}

KernelArg KernelArg::float32(float v) {
  KernelArg a;
  a.kind = Kind::F32;
  a.value.f32 = v;
  return a;
}

KernelArg KernelArg::uint32(std::uint32_t v) {
  KernelArg a;
  a.kind = Kind::U32;
  a.value.u32 = v;
  return a;
}

KernelArg KernelArg::uint64(std::uint64_t v) {
  KernelArg a;
  a.kind = Kind::U64;
  a.value.u64 = v;
  return a;
}

std::string KernelArg::typeName() const {
  switch (kind) {
  case Kind::Pointer:
    return "ptr<" + elementType + ">";
  case Kind::I32:
    return "i32";
  case Kind::I64:
    return "i64";
  case Kind::F32:
    return "f32";
  case Kind::U32:
    return "u32";
  case Kind::U64:
    return "u64";
  }
  return "?";
}

Status checkArguments(const Manifest &manifest,
                      const std::vector<KernelArg> &args) {
  const auto &params = manifest.params;
  if (args.size() != params.size()) {
    std::string sig;
    for (const KernelParam &p : params)
      sig += (sig.empty() ? "" : ", ") + p.name + ": " + p.type;
    return Status::error("kernel '" + manifest.kernelName + "' takes " +
                         std::to_string(params.size()) + " argument" +
                         (params.size() == 1 ? "" : "s") + ", got " +
                         std::to_string(args.size()) + " (signature: (" + sig +
                         "))");
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string got = args[i].typeName();
    if (got != params[i].type)
      return Status::error("argument " + std::to_string(i) + " '" +
                           params[i].name + "': expected " + params[i].type +
                           ", got " + got);
    // The code assumes the alignment (16-byte vector loads): a pointer off
    // it would fault on the GPU (CUDA_ERROR_MISALIGNED_ADDRESS, which
    // poisons the context), so it never reaches a launch.
    std::uint64_t align = std::uint64_t(std::max(0, params[i].align));
    if (args[i].kind == KernelArg::Kind::Pointer && align > 1 &&
        args[i].value.ptr % align != 0) {
      char ptr[24];
      std::snprintf(ptr, sizeof(ptr), "0x%llx",
                    static_cast<unsigned long long>(args[i].value.ptr));
      return Status::error(
          "argument " + std::to_string(i) + " '" + params[i].name + "' (" +
          params[i].type + "): pointer " + ptr + " is not " +
          std::to_string(align) + "-byte aligned; the kernel was compiled for " +
          std::to_string(align) +
          "-byte aligned pointers (vector loads): pass an aligned allocation "
          "or copy the slice");
    }
  }
  return checkRequirements(manifest, args);
}

//===----------------------------------------------------------------------===//
// Tensor maps
//===----------------------------------------------------------------------===//

namespace {

/// Programs along y or z one launch may have.
constexpr unsigned kMaxGridYZ = 65535;

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

/// The TMA tensor map `t` (see Manifest.h) of its pointer argument in `args`
/// (already checked against the manifest): 2-D, rows of t.rowElems elements
/// (0: the whole stride) t.rowStride elements apart (times the strideArgs'
/// values), as many rows as the allocation holds from the pointer on, so
/// that a box past them is zero-filled instead of read. The context must
/// be current.
Expected<CUtensorMap> encodeTensorMap(const CudaApi &api, const Manifest &m,
                                      const TensorMapParam &t,
                                      const std::vector<KernelArg> &args) {
  std::size_t i = std::size_t(t.arg);
  // Manifest::fromJSON checks these; a manifest built in code may not be.
  if (t.arg < 0 || i >= args.size() ||
      args[i].kind != KernelArg::Kind::Pointer || t.rowElems < 0 ||
      t.rowStride <= 0 || t.elemBytes <= 0)
    return Status::error("tensor map of argument " + std::to_string(t.arg) +
                         ": not a pointer argument, or an empty row");
  std::string what = "tensor map of argument " + std::to_string(t.arg) + " '" +
                     m.params[i].name + "'";
  auto fail = [&](const std::string &message) -> Expected<CUtensorMap> {
    return Status::error(what + ": " + message);
  };
  // The row stride, in elements: a run-time one from the arguments.
  std::uint64_t stride = std::uint64_t(t.rowStride);
  for (int a : t.strideArgs) {
    if (a < 0 || std::size_t(a) >= args.size() ||
        (args[a].kind != KernelArg::Kind::I32 &&
         args[a].kind != KernelArg::Kind::I64))
      return fail("its row stride names argument " + std::to_string(a) +
                  ", not an integer");
    std::int64_t v = args[a].kind == KernelArg::Kind::I32 ? args[a].value.i32
                                                          : args[a].value.i64;
    if (v <= 0 || stride > (std::uint64_t(1) << 40) / std::uint64_t(v))
      return fail("row stride " + std::to_string(t.rowStride) + " x '" +
                  m.params[a].name + "' = " + std::to_string(v) +
                  " is not a positive stride below 2^40 elements");
    stride *= std::uint64_t(v);
  }
  if ((stride * std::uint64_t(t.elemBytes)) % 16 != 0)
    return fail("rows " + std::to_string(stride) + " elements of " +
                std::to_string(t.elemBytes) + " bytes apart are not a multiple "
                "of 16 bytes apart (TMA needs it)");
  // A map of whole rows (rowElems 0: boxes start at a column, or move
  // along the rows) may have rows shorter than a box: TMA reads the
  // columns past a row as zero. A map of the first rowElems columns of
  // each row must hold a box.
  std::uint64_t rowElems = t.rowElems ? std::uint64_t(t.rowElems) : stride;
  if (stride < rowElems ||
      (t.rowElems && rowElems < std::uint64_t(t.boxElems)))
    return fail("rows " + std::to_string(stride) +
                " elements apart are shorter than its box (" +
                std::to_string(std::max<std::uint64_t>(rowElems, t.boxElems)) +
                " elements)");
  DevicePtr p = args[i].value.ptr;
  if (p == 0)
    return fail("null pointer (TMA needs device memory)");
  if (p % 16 != 0)
    return fail("pointer " + hex(p) + " is not 16-byte aligned (TMA needs it)");

  CUdeviceptr base = 0;
  std::size_t size = 0;
  if (Status s = api.check(api.cuMemGetAddressRange(&base, &size, p),
                           "cuMemGetAddressRange");
      !s.ok())
    return fail("pointer " + hex(p) + " is not device memory: " + s.message());
  std::uint64_t end = std::uint64_t(base) + size;
  std::uint64_t avail = p >= base && p < end ? end - p : 0;
  std::uint64_t rowBytes = stride * t.elemBytes;
  std::uint64_t need = rowElems * t.elemBytes;
  if (avail < need)
    return fail("pointer " + hex(p) + " has " + std::to_string(avail) +
                " bytes of its allocation (" + hex(base) + ", " +
                std::to_string(size) +
                " bytes) from there, less than one row (" +
                std::to_string(need) + " bytes)");
  // Row r is mapped iff p + r*rowBytes + need <= base + size.
  std::uint64_t rows =
      std::min<std::uint64_t>((avail - need) / rowBytes + 1, 0x7fffffffu);

  if (!api.cuTensorMapEncodeTiled)
    return fail("the CUDA driver " + api.path +
                " lacks cuTensorMapEncodeTiled (CUDA 12 or newer needed)");
  const cuuint64_t globalDim[2] = {cuuint64_t(rowElems), rows};
  const cuuint64_t globalStrides[1] = {rowBytes};
  const cuuint32_t boxDim[2] = {cuuint32_t(t.boxElems), cuuint32_t(t.boxRows)};
  const cuuint32_t elementStrides[2] = {1, 1};
  CUtensorMap map{};
  CUresult r = api.cuTensorMapEncodeTiled(
      &map,
      t.elemBytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                       : CU_TENSOR_MAP_DATA_TYPE_UINT16,
      2,
      reinterpret_cast<void *>(static_cast<std::uintptr_t>(p)), globalDim,
      globalStrides, boxDim, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, kTensorMapL2Promotion,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (Status s = api.check(r, "cuTensorMapEncodeTiled"); !s.ok())
    return fail(s.message() + " (pointer " + hex(p) + ", " +
                std::to_string(rowElems) + " x " + std::to_string(rows) +
                " elements of " + std::to_string(t.elemBytes) +
                " bytes, rows " + std::to_string(rowBytes) +
                " bytes apart, box " + std::to_string(t.boxElems) + " x " +
                std::to_string(t.boxRows) + ")");
  return map;
}

} // namespace

Status Kernel::launch(std::array<unsigned, 3> grid,
                      const std::vector<KernelArg> &args, Stream stream) const {
  if (!function_)
    return Status::error("launch of a kernel that was never loaded");
  if (Status s = checkArguments(manifest_, args); !s.ok())
    return s.withContext("launching '" + manifest_.kernelName + "'");
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
    return Status(); // nothing to do: an empty problem is not an error
  // The hardware's grid limits bind each launch: at most 65535 programs
  // along y and z. A persistent kernel launches its resident programs along
  // x and loops over the grid, which may then be anything it counts
  // (below); a kernel with the manifest's gridArgs runs a larger grid as
  // several launches (splitLaunches); an older one cannot.
  bool splits = !manifest_.persistent && manifest_.gridArgsKnown;
  if (grid[0] > 0x7fffffffu || grid[1] > 0x7fffffffu || grid[2] > 0x7fffffffu ||
      (!manifest_.persistent && !splits &&
       (grid[1] > kMaxGridYZ || grid[2] > kMaxGridYZ)))
    return Status::error(
        "launching '" + manifest_.kernelName + "': grid (" +
        std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " +
        std::to_string(grid[2]) + ") exceeds the limits (2^31-1, " +
        (manifest_.persistent || splits
             ? std::string("2^31-1, 2^31-1)")
             : std::string("65535, 65535); its manifest has no \"gridArgs\" "
                           "(a tilec older than split launches): compile it "
                           "again, or use a persistent schedule")));

  // Persistent: the resident programs loop over `grid`, passed to them.
  std::array<unsigned, 3> launched = grid;
  if (manifest_.persistent) {
    std::uint64_t programs = std::uint64_t(grid[0]) * grid[1] * grid[2];
    // Its loop counts programs in i32, one launch's worth past the last.
    if (programs > (1u << 30))
      return Status::error("launching '" + manifest_.kernelName + "': " +
                           std::to_string(programs) +
                           " programs, more than a persistent kernel counts "
                           "(2^30)");
    if (resident_ == 0)
      return Status::error("launching '" + manifest_.kernelName +
                           "': persistent, but loaded without its resident "
                           "program count");
    launched = {unsigned(std::min<std::uint64_t>(programs, resident_)), 1, 1};
  }

  const CudaApi &api = *ctx_->api;
  if (Status s = ctx_->makeCurrent(); !s.ok())
    return s;

  // The tensor maps go after the user's arguments, by value: the driver
  // copies the 128 bytes each entry points to, before cuLaunchKernel returns.
  std::vector<CUtensorMap> maps;
  maps.reserve(manifest_.tensorMaps.size());
  for (const TensorMapParam &t : manifest_.tensorMaps) {
    Expected<CUtensorMap> map = encodeTensorMap(api, manifest_, t, args);
    if (!map)
      return map.status().withContext("launching '" + manifest_.kernelName +
                                      "'");
    maps.push_back(*map);
  }

  // kernelParams ends with a nullptr: the driver reads only as many entries
  // as the kernel declares, and the terminator lets a fake driver count them.
  std::vector<void *> params;
  params.reserve(args.size() + 3 + maps.size() + 1);
  for (const KernelArg &a : args)
    params.push_back(const_cast<void *>(static_cast<const void *>(&a.value)));
  if (manifest_.persistent)
    for (unsigned &g : grid)
      params.push_back(&g);
  // gridArgs: one u32 each, rewritten before each launch of a split grid.
  std::vector<std::uint32_t> gridValues(manifest_.gridArgs.size());
  for (std::uint32_t &v : gridValues)
    params.push_back(&v);
  for (CUtensorMap &map : maps)
    params.push_back(&map);
  params.push_back(nullptr);

  // Launches of at most 65535 along y and z, z-major, in stream order; the
  // driver copies the parameters at each call. One launch unless the grid
  // is larger (a split adds no synchronisation: launches of a stream run
  // in order, and programs of one grid do not communicate).
  for (unsigned z0 = 0; z0 < launched[2]; z0 += kMaxGridYZ)
    for (unsigned y0 = 0; y0 < launched[1]; y0 += kMaxGridYZ) {
      for (std::size_t i = 0; i < gridValues.size(); ++i) {
        const std::string &g = manifest_.gridArgs[i];
        gridValues[i] = g == "offset_y" ? y0
                        : g == "offset_z" ? z0
                        : g == "size_y"   ? launched[1]
                                          : launched[2];
      }
      CUresult r = api.cuLaunchKernel(
          static_cast<CUfunction>(function_), launched[0],
          std::min(kMaxGridYZ, launched[1] - y0),
          std::min(kMaxGridYZ, launched[2] - z0),
          unsigned(manifest_.blockSize), 1, 1,
          unsigned(manifest_.sharedMemoryBytes), static_cast<CUstream>(stream),
          params.size() == 1 ? nullptr : params.data(), nullptr);
      if (Status s = api.check(r, "cuLaunchKernel"); !s.ok())
        return s.withContext("launching '" + manifest_.kernelName +
                             "' (programs from y " + std::to_string(y0) +
                             ", z " + std::to_string(z0) + ")");
    }
  return Status();
}

} // namespace tile
