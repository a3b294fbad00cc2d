//===- ScheduleFlags.h - tilec's schedule options ---------------*- C++ -*-===//
#pragma once

#include "tile/Schedule.h"

#include "llvm/Support/CommandLine.h"

#include <string>

namespace tilec {
/// The schedule the command line asks for: -schedule=FILE.json (or
/// name=value pairs), then each field flag given (-num-warps=8, -producer,
/// ...) on top. "" on success, else the error.
std::string scheduleFromFlags(tile::Schedule &out);
/// The category of those flags (shown by --help).
llvm::cl::OptionCategory &scheduleCategory();
} // namespace tilec
