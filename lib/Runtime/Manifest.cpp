//===- Manifest.cpp - manifest JSON writer / schema reader, FNV-1a hash ---===//
//
// toJSON writes a fixed key order; fromJSON parses with json::parse
// (line:column errors) and then checks the schema, naming the missing or
// mistyped key, and the tensor maps against the rules the launcher's encoding
// needs. Every key is required except "tensorMaps" (added later; absent
// means none), "persistent" (written only when true), "gridArgs" (absent
// in older manifests: no grids over 65535 along y or z) and "requires"
// (written when the kernel has require(...) conditions; Requires.cpp). The
// "scratchBytesPerProgram" of older manifests is accepted only as 0. No
// LLVM: the runtime links without it.
//
//===----------------------------------------------------------------------===//

#include "tile/Manifest.h"

#include "Json.h"
#include "Requires.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace tile {

using json::quote;
using json::Value;

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

std::string Manifest::toJSON() const {
  std::string j = "{\n";
  j += "  \"kernelName\": " + quote(kernelName) + ",\n";
  j += "  \"params\": [";
  for (std::size_t i = 0; i < params.size(); ++i)
    j += std::string(i ? "," : "") +
         "\n    {\"name\": " + quote(params[i].name) +
         ", \"type\": " + quote(params[i].type) +
         (params[i].align ? ", \"align\": " + std::to_string(params[i].align)
                          : std::string()) +
         "}";
  j += params.empty() ? "],\n" : "\n  ],\n";
  j += "  \"constants\": {";
  bool first = true;
  for (const auto &[k, v] : constants) {
    j += std::string(first ? "" : ",") + "\n    " + quote(k) + ": " + quote(v);
    first = false;
  }
  j += constants.empty() ? "},\n" : "\n  },\n";
  j += "  \"blockSize\": " + std::to_string(blockSize) + ",\n";
  j += "  \"sharedMemoryBytes\": " + std::to_string(sharedMemoryBytes) + ",\n";
  j += "  \"arch\": " + quote(arch) + ",\n";
  j += "  \"tensorMaps\": [";
  for (std::size_t i = 0; i < tensorMaps.size(); ++i) {
    const TensorMapParam &t = tensorMaps[i];
    j += std::string(i ? "," : "") +
         "\n    {\"arg\": " + std::to_string(t.arg) +
         ", \"elemBytes\": " + std::to_string(t.elemBytes) +
         ", \"rowElems\": " + std::to_string(t.rowElems) +
         ", \"rowStride\": " + std::to_string(t.rowStride) +
         ", \"boxElems\": " + std::to_string(t.boxElems) +
         ", \"boxRows\": " + std::to_string(t.boxRows);
    if (!t.strideArgs.empty()) {
      j += ", \"strideArgs\": [";
      for (std::size_t k = 0; k < t.strideArgs.size(); ++k)
        j += (k ? ", " : "") + std::to_string(t.strideArgs[k]);
      j += "]";
    }
    j += "}";
  }
  j += tensorMaps.empty() ? "],\n" : "\n  ],\n";
  if (persistent)
    j += "  \"persistent\": true,\n";
  if (gridArgsKnown) {
    j += "  \"gridArgs\": [";
    for (std::size_t i = 0; i < gridArgs.size(); ++i)
      j += (i ? ", " : "") + quote(gridArgs[i]);
    j += "],\n";
  }
  if (!requirements.empty())
    j += "  \"requires\": " + detail::requirementsJSON(requirements) + ",\n";
  if (!schedule.empty())
    j += "  \"schedule\": " + quote(schedule) + ",\n";
  j += "  \"tilecVersion\": " + quote(tilecVersion) + ",\n";
  j += "  \"llvmVersion\": " + quote(llvmVersion) + ",\n";
  j += "  \"cudaVersion\": " + quote(cudaVersion) + ",\n";
  j += "  \"sourceHash\": " + quote(sourceHash) + "\n";
  return j + "}\n";
}

//===----------------------------------------------------------------------===//
// Schema
//===----------------------------------------------------------------------===//

namespace {

bool typeError(const std::string &what, const char *expected, const Value &v,
               std::string &error) {
  error = what + " must be " + expected + ", got " + v.kindName();
  return false;
}

bool getString(const Value &obj, const char *key, std::string &out,
               std::string &error) {
  const Value *v = obj.get(key);
  if (!v) {
    error = std::string("missing key \"") + key + "\"";
    return false;
  }
  if (v->kind != Value::String)
    return typeError(std::string("\"") + key + "\"", "a string", *v, error);
  out = v->text;
  return true;
}

bool getInt(const Value &obj, const char *key, int &out, std::string &error) {
  const Value *v = obj.get(key);
  if (!v) {
    error = std::string("missing key \"") + key + "\"";
    return false;
  }
  std::string what = std::string("\"") + key + "\"";
  if (v->kind != Value::Number)
    return typeError(what, "an integer", *v, error);
  if (v->number != std::floor(v->number) || v->number < 0 ||
      v->number > 2147483647.0) {
    error = what + " must be an integer in 0..2^31-1, got " + v->text;
    return false;
  }
  out = int(v->number);
  return true;
}

/// One "tensorMaps" entry (an object): the six integer keys and optionally
/// "strideArgs" (integer parameters' indices), and the
/// limits that cuTensorMapEncodeTiled (2-D, 128-byte swizzle) and the launcher
/// need.
bool getTensorMap(const Value &v, const std::vector<KernelParam> &params,
                  TensorMapParam &t, std::string &error) {
  static const char *const keys[] = {"arg",      "elemBytes", "rowElems",
                                     "rowStride", "boxElems", "boxRows",
                                     "strideArgs"};
  for (const auto &member : v.members) {
    bool known = false;
    for (const char *k : keys)
      known = known || member.first == k;
    if (!known) {
      error = "unknown key " + quote(member.first);
      return false;
    }
  }
  if (!getInt(v, "arg", t.arg, error) ||
      !getInt(v, "elemBytes", t.elemBytes, error) ||
      !getInt(v, "rowElems", t.rowElems, error) ||
      !getInt(v, "rowStride", t.rowStride, error) ||
      !getInt(v, "boxElems", t.boxElems, error) ||
      !getInt(v, "boxRows", t.boxRows, error))
    return false;
  auto fail = [&](std::string message) {
    error = std::move(message);
    return false;
  };
  auto num = [](long long x) { return std::to_string(x); };
  if (std::size_t(t.arg) >= params.size())
    return fail("\"arg\" " + num(t.arg) +
                " is not a parameter (the kernel has " +
                num(long(params.size())) + ")");
  const KernelParam &p = params[std::size_t(t.arg)];
  if (p.type.rfind("ptr<", 0) != 0)
    return fail("\"arg\" " + num(t.arg) + " is '" + p.name + "' of type " +
                p.type + ", not a pointer");
  if (t.elemBytes != 1 && t.elemBytes != 2)
    return fail("\"elemBytes\" must be 1 or 2, got " + num(t.elemBytes));
  if (const Value *args = v.get("strideArgs")) {
    if (args->kind != Value::Array)
      return fail("\"strideArgs\" must be an array of parameter indices");
    for (const Value &a : args->items) {
      if (a.kind != Value::Number || a.number != double(int(a.number)) ||
          a.number < 0 || std::size_t(a.number) >= params.size())
        return fail("\"strideArgs\" holds " + a.text +
                    ", not a parameter index");
      const KernelParam &q = params[std::size_t(a.number)];
      if (q.type != "i32" && q.type != "i64")
        return fail("\"strideArgs\" names '" + q.name + "' of type " +
                    q.type + ", not an integer");
      t.strideArgs.push_back(int(a.number));
    }
  }
  // (getInt: none is negative; rowElems 0: rows as long as their stride.)
  if (t.rowStride <= 0 || t.boxElems <= 0 || t.boxRows <= 0) {
    const char *key = t.rowStride <= 0  ? "rowStride"
                      : t.boxElems <= 0 ? "boxElems"
                                        : "boxRows";
    return fail(std::string("\"") + key + "\" must be positive, got 0");
  }
  if (t.rowElems == 0 && t.strideArgs.empty() && t.rowStride < t.boxElems)
    return fail("\"rowStride\" " + num(t.rowStride) +
                " is less than \"boxElems\" " + num(t.boxElems));
  if (t.rowElems != 0 && t.strideArgs.empty() && t.rowStride < t.rowElems)
    return fail("\"rowStride\" " + num(t.rowStride) +
                " is less than \"rowElems\" " + num(t.rowElems));
  // A run-time stride (strideArgs) is checked at launch, as a product.
  long long rowBytes = (long long)t.rowStride * t.elemBytes;
  if (t.strideArgs.empty() && rowBytes % 16 != 0)
    return fail("\"rowStride\" " + num(t.rowStride) + " of " +
                num(t.elemBytes) + "-byte elements is " + num(rowBytes) +
                " bytes, not a multiple of 16");
  if (t.rowElems != 0 && t.boxElems > t.rowElems)
    return fail("\"boxElems\" " + num(t.boxElems) +
                " is more than \"rowElems\" " + num(t.rowElems));
  long long boxBytes = (long long)t.boxElems * t.elemBytes;
  if (boxBytes > 128 || boxBytes % 16 != 0)
    return fail("\"boxElems\" " + num(t.boxElems) + " of " + num(t.elemBytes) +
                "-byte elements is " + num(boxBytes) +
                " bytes; the 128-byte swizzle needs a multiple of 16 up to "
                "128");
  if (t.boxRows > 256)
    return fail("\"boxRows\" must be at most 256, got " + num(t.boxRows));
  return true;
}

} // namespace

bool Manifest::fromJSON(const std::string &text, Manifest &out,
                        std::string &error) {
  Value root;
  std::string why;
  if (!json::parse(text, root, why)) {
    error = "malformed manifest JSON: " + why;
    return false;
  }
  auto bad = [&](const std::string &message) {
    error = "invalid manifest: " + message;
    return false;
  };
  if (root.kind != Value::Object)
    return bad(std::string("the top level must be an object, got ") +
               root.kindName());

  Manifest m;
  if (!getString(root, "kernelName", m.kernelName, why))
    return bad(why);

  const Value *params = root.get("params");
  if (!params)
    return bad("missing key \"params\"");
  if (params->kind != Value::Array)
    return typeError("\"params\"", "an array", *params, why), bad(why);
  for (std::size_t i = 0; i < params->items.size(); ++i) {
    const Value &p = params->items[i];
    std::string where = "params[" + std::to_string(i) + "]";
    if (p.kind != Value::Object)
      return typeError(where, "an object", p, why), bad(why);
    KernelParam kp;
    if (!getString(p, "name", kp.name, why) ||
        !getString(p, "type", kp.type, why))
      return bad(where + ": " + why);
    if (const Value *a = p.get("align")) { // absent in older manifests
      if (a->kind != Value::Number || a->number < 1 || a->number > 4096 ||
          a->number != double(int(a->number)) ||
          (int(a->number) & (int(a->number) - 1)))
        return bad(where + ": \"align\" must be a power of two in [1, 4096]");
      kp.align = int(a->number);
    }
    m.params.push_back(std::move(kp));
  }

  const Value *constants = root.get("constants");
  if (!constants)
    return bad("missing key \"constants\"");
  if (constants->kind != Value::Object)
    return typeError("\"constants\"", "an object", *constants, why), bad(why);
  for (const auto &[key, v] : constants->members) {
    if (v.kind == Value::String || v.kind == Value::Number)
      m.constants[key] = v.text;
    else if (v.kind == Value::Bool)
      m.constants[key] = v.boolean ? "true" : "false";
    else
      return typeError("constants[\"" + key + "\"]", "a string", v, why),
             bad(why);
  }

  if (!getInt(root, "blockSize", m.blockSize, why) ||
      !getInt(root, "sharedMemoryBytes", m.sharedMemoryBytes, why) ||
      !getString(root, "arch", m.arch, why))
    return bad(why);

  // An older tilec's TMA kernels took a hidden global scratch pointer
  // instead of tensor maps; nothing passes it any more, so refuse them
  // (a stale JIT cache entry is then compiled again).
  if (const Value *old = root.get("scratchBytesPerProgram");
      old && !(old->kind == Value::Number && old->number == 0))
    return bad("\"scratchBytesPerProgram\" " + old->text +
               ": the kernel needs the global scratch of an older tilec, "
               "which this runtime no longer passes; compile it again");

  if (const Value *maps = root.get("tensorMaps")) { // absent (older): none
    if (maps->kind != Value::Array)
      return typeError("\"tensorMaps\"", "an array", *maps, why), bad(why);
    for (std::size_t i = 0; i < maps->items.size(); ++i) {
      const Value &v = maps->items[i];
      std::string where = "\"tensorMaps\"[" + std::to_string(i) + "]";
      if (v.kind != Value::Object)
        return typeError(where, "an object", v, why), bad(why);
      TensorMapParam t;
      if (!getTensorMap(v, m.params, t, why))
        return bad(where + ": " + why);
      m.tensorMaps.push_back(t);
    }
  }

  if (const Value *p = root.get("persistent")) { // absent: false
    if (p->kind != Value::Bool)
      return typeError("\"persistent\"", "a boolean", *p, why), bad(why);
    m.persistent = p->boolean;
  }
  if (const Value *g = root.get("gridArgs")) { // absent (older): refuse big grids
    if (g->kind != Value::Array)
      return typeError("\"gridArgs\"", "an array", *g, why), bad(why);
    m.gridArgsKnown = true;
    for (std::size_t i = 0; i < g->items.size(); ++i) {
      const Value &v = g->items[i];
      std::string where = "\"gridArgs\"[" + std::to_string(i) + "]";
      if (v.kind != Value::String)
        return typeError(where, "a string", v, why), bad(why);
      if (v.text != "offset_y" && v.text != "size_y" && v.text != "offset_z" &&
          v.text != "size_z")
        return bad(where + ": \"" + v.text +
                   "\" is none of offset_y, size_y, offset_z, size_z");
      for (const std::string &seen : m.gridArgs)
        if (seen == v.text)
          return bad(where + ": \"" + v.text + "\" listed twice");
      m.gridArgs.push_back(v.text);
    }
  }
  if (const Value *r = root.get("requires"); // absent: none
      r && !detail::parseRequirements(*r, m.params, m.requirements, why))
    return bad(why);
  if (root.get("schedule") && !getString(root, "schedule", m.schedule, why))
    return bad(why); // absent in manifests older than the key

  if (!getString(root, "tilecVersion", m.tilecVersion, why) ||
      !getString(root, "llvmVersion", m.llvmVersion, why) ||
      !getString(root, "cudaVersion", m.cudaVersion, why) ||
      !getString(root, "sourceHash", m.sourceHash, why))
    return bad(why);

  out = std::move(m);
  return true;
}

bool Manifest::operator==(const Manifest &o) const {
  return kernelName == o.kernelName && params == o.params &&
         constants == o.constants && blockSize == o.blockSize &&
         sharedMemoryBytes == o.sharedMemoryBytes && arch == o.arch &&
         tensorMaps == o.tensorMaps && persistent == o.persistent &&
         gridArgs == o.gridArgs && gridArgsKnown == o.gridArgsKnown &&
         requirements == o.requirements &&
         schedule == o.schedule && tilecVersion == o.tilecVersion &&
         llvmVersion == o.llvmVersion && cudaVersion == o.cudaVersion &&
         sourceHash == o.sourceHash;
}

bool TensorMapParam::operator==(const TensorMapParam &o) const {
  return arg == o.arg && elemBytes == o.elemBytes && rowElems == o.rowElems &&
         rowStride == o.rowStride && boxElems == o.boxElems &&
         boxRows == o.boxRows && strideArgs == o.strideArgs;
}

std::string hashHex(const std::string &data) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(h));
  return buf;
}

} // namespace tile
