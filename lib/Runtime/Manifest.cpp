//===- Manifest.cpp - manifest JSON writer / schema reader, FNV-1a hash ---===//
//
// toJSON writes a fixed key order; fromJSON parses with json::parse
// (line:column errors) and then checks the schema, naming the missing or
// mistyped key. Every key is required except "scratchBytesPerProgram"
// (added later; absent means 0). No LLVM: the runtime links without it.
//
//===----------------------------------------------------------------------===//

#include "tile/Manifest.h"

#include "Json.h"

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
         ", \"type\": " + quote(params[i].type) + "}";
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
  j += "  \"scratchBytesPerProgram\": " +
       std::to_string(scratchBytesPerProgram) + ",\n";
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
      !getString(root, "arch", m.arch, why) ||
      (root.get("scratchBytesPerProgram") && // absent (older manifests): 0
       !getInt(root, "scratchBytesPerProgram", m.scratchBytesPerProgram,
               why)) ||
      !getString(root, "tilecVersion", m.tilecVersion, why) ||
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
         scratchBytesPerProgram == o.scratchBytesPerProgram &&
         tilecVersion == o.tilecVersion && llvmVersion == o.llvmVersion &&
         cudaVersion == o.cudaVersion && sourceHash == o.sourceHash;
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
