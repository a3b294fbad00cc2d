//===- Requires.h - a kernel's require(...) checked at launch ---*- C++ -*-===//
//
// Internal to TileRuntime (see Requires.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/Runtime.h"

namespace tile::json {
struct Value;
}

namespace tile::detail {
/// The manifest's "requires" array (pretty-printed as the writer's other
/// arrays), and its reader, which validates each expression.
std::string requirementsJSON(const std::vector<Requirement> &rs);
bool parseRequirements(const json::Value &v,
                       const std::vector<KernelParam> &params,
                       std::vector<Requirement> &out, std::string &error);

/// Evaluates every requirement of `manifest` on `args` (already checked
/// against the parameters' types); the first that fails, or that cannot be
/// evaluated (a division by zero), is an error naming it, where it is
/// written, and the arguments it reads.
Status checkRequirements(const Manifest &manifest,
                         const std::vector<KernelArg> &args);
} // namespace tile::detail
