//===- ScheduleFlags.cpp - tilec's schedule options -----------------------===//
//
// One flag per tile::Schedule field, named like Triton's (-num-warps,
// -num-stages), plus -schedule for a JSON file or name=value pairs. A flag
// that is not given leaves the field to -schedule, else its default.
//
//===----------------------------------------------------------------------===//
#include "ScheduleFlags.h"

#include "tile/ConfigTable.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

namespace {
cl::OptionCategory category("tilec schedule options (docs/schedule.md)");
} // namespace

cl::OptionCategory &tilec::scheduleCategory() { return category; }

namespace {

cl::opt<std::string> scheduleArg(
    "schedule", cl::value_desc("file.json|name=value,..."), cl::cat(category),
    cl::desc("The schedule: a JSON object of fields or name=value pairs; "
             "the other schedule flags override it"));

cl::opt<int64_t> numWarps("num-warps", cl::value_desc("N"), cl::cat(category),
                          cl::desc("Warps per program (power of two, 1-32; "
                                   "default 4)"));
cl::opt<int64_t> numStages("num-stages", cl::value_desc("N"), cl::cat(category),
                           cl::desc("Stages of each TMA or cp.async ring (2-4; default 3)"));
cl::opt<int64_t> minBlocks("min-blocks", cl::value_desc("N"), cl::cat(category),
                           cl::desc("CTAs per SM the registers must allow "
                                    "(0: no hint)"));
cl::opt<int64_t> ctaPrograms(
    "cta-programs", cl::value_desc("N"), cl::cat(category),
    cl::desc("Programs per CTA sharing a producer (1-8; needs -persistent "
             "-producer)"));
cl::opt<int64_t> l2Group("l2-group", cl::value_desc("N"), cl::cat(category),
                         cl::desc("Program order: groups of about N programs "
                                  "over whole rows of grid x (0: launch "
                                  "order)"));
cl::opt<bool> tma("tma", cl::cat(category),
                  cl::desc("Dot operand loads by TMA rings on sm_90a "
                           "(default true)"));
cl::opt<bool> tmaA("tma-a", cl::cat(category),
                   cl::desc("Also a loop-invariant dot A operand by TMA"));
cl::opt<bool> tmaStore("tma-store", cl::cat(category),
                       cl::desc("Stores of whole rows by TMA on sm_90a "
                                "(default true)"));
cl::opt<bool> pingpong("pingpong", cl::cat(category),
                       cl::desc("Two consumer warpgroups take turns (8 "
                                "warps; default true)"));
cl::opt<bool> producer("producer", cl::cat(category),
                       cl::desc("A producer warpgroup issues the TMA copies"));
cl::opt<bool> persistent("persistent", cl::cat(category),
                         cl::desc("Resident programs loop over the launch "
                                  "grid"));
cl::opt<bool> reverseX("reverse-x", cl::cat(category),
                       cl::desc("Program order: program_id(0) counts down"));
cl::opt<bool> indexAhead("index-ahead", cl::cat(category),
                         cl::desc("A prefetched gather's index loads (page "
                                  "ids) one more iteration ahead"));
cl::opt<bool> cpAsync("cp-async", cl::cat(category),
                      cl::desc("Loop loads of mma.sync dots' B operands by "
                               "cp.async into a shared-memory ring"));

const std::pair<cl::opt<int64_t> *, const char *> intFlags[] = {
    {&numWarps, "num_warps"},     {&numStages, "num_stages"},
    {&minBlocks, "min_blocks"},   {&ctaPrograms, "cta_programs"},
    {&l2Group, "l2_group"}};
const std::pair<cl::opt<bool> *, const char *> boolFlags[] = {
    {&tma, "tma"},           {&tmaA, "tma_a"},
    {&tmaStore, "tma_store"}, {&pingpong, "pingpong"},
    {&producer, "producer"}, {&persistent, "persistent"},
    {&reverseX, "reverse_x"}, {&indexAhead, "index_ahead"},
    {&cpAsync, "cp_async"}};
} // namespace

std::string tilec::scheduleFromFlags(tile::Schedule &out) {
  tile::Schedule s;
  if (!scheduleArg.empty()) {
    const std::string &arg = scheduleArg;
    if (arg.find('=') != std::string::npos && arg.find('{') == std::string::npos &&
        !sys::fs::exists(arg)) {
      std::string why = s.parse(arg);
      if (!why.empty())
        return "-schedule: " + why;
    } else {
      ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(arg);
      if (!file)
        return "-schedule: cannot read '" + arg + "': " +
               file.getError().message();
      std::string why;
      if (!tile::parseScheduleJSON((*file)->getBuffer().str(), s, why))
        return "-schedule " + arg + ": " + why;
    }
  }
  for (auto [opt, field] : intFlags)
    if (opt->getNumOccurrences()) {
      std::string why = s.set(field, std::to_string(opt->getValue()));
      if (!why.empty())
        return "-" + opt->ArgStr.str() + ": " + why;
    }
  for (auto [opt, field] : boolFlags)
    if (opt->getNumOccurrences())
      s.set(field, opt->getValue() ? "true" : "false");
  std::string why = s.validate();
  if (!why.empty())
    return "invalid schedule: " + why;
  out = s;
  return "";
}
