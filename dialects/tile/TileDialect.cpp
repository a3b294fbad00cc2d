//===- TileDialect.cpp - dialect, types and layout attribute ---------------===//
#include "dialects/tile/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tile;

#include "dialects/tile/TileDialect.cpp.inc"
#include "dialects/tile/TileEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/tile/TileAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/tile/TileTypes.cpp.inc"

void TileDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/tile/TileAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/tile/TileTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/tile/TileOps.cpp.inc"
      >();
}

bool mlir::tile::isFp8(Type t) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(t);
}

llvm::StringRef mlir::tile::fp8Name(Type t) {
  return isa<Float8E4M3FNType>(t)  ? "f8e4m3"
         : isa<Float8E5M2Type>(t) ? "f8e5m2"
                                  : "";
}

Type mlir::tile::getElementTypeOrSelf(Type t) {
  if (auto tt = dyn_cast<TileType>(t))
    return tt.getElementType();
  return t;
}

//===----------------------------------------------------------------------===//
// TileType
//===----------------------------------------------------------------------===//

// !tile.tile<128x64xf32> or !tile.tile<128x64xf32, #tile.layout<...>>
Type TileType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  Attribute encoding;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType))
    return {};
  if (succeeded(parser.parseOptionalComma()) && parser.parseAttribute(encoding))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<TileType>(parser.getContext(), shape, elementType,
                                     encoding);
}

void TileType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape())
    printer << d << "x";
  printer << getElementType();
  if (getEncoding())
    printer << ", " << getEncoding();
  printer << ">";
}

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType,
                               Attribute encoding) {
  if (shape.empty())
    return emitError() << "tile must have rank >= 1";
  for (int64_t d : shape)
    if (d <= 0)
      return emitError() << "tile dimensions must be positive, got " << d;
  if (!elementType.isIntOrFloat() && !isa<PtrType>(elementType))
    return emitError() << "tile element type must be an integer, a float or "
                          "!tile.ptr, got "
                       << elementType;
  if (encoding) {
    auto layout = dyn_cast<LayoutAttr>(encoding);
    if (!layout)
      return emitError() << "tile encoding must be a #tile.layout";
    if (layout.getRank() != shape.size())
      return emitError() << "layout rank " << layout.getRank()
                         << " does not match tile rank " << shape.size();
    // Every basis must stay inside the shape.
    unsigned rank = layout.getRank();
    SmallVector<int64_t> covered(rank, 0);
    for (ArrayRef<int64_t> bases :
         {layout.getRegs(), layout.getLanes(), layout.getWarps()})
      for (size_t i = 0; i < bases.size(); ++i) {
        if (bases[i] >= shape[i % rank])
          return emitError() << "layout basis component " << bases[i]
                             << " is out of range for dimension " << i % rank
                             << " of size " << shape[i % rank];
        covered[i % rank] |= bases[i];
      }
    // Every coordinate bit must be reached, or some elements have no owner.
    for (unsigned d = 0; d < rank; ++d)
      if (covered[d] != shape[d] - 1)
        return emitError() << "layout does not cover dimension " << d
                           << " of size " << shape[d];
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

// A list of bases: [[a, b], [c, d]] (possibly []). Each basis has `rank` ints.
static ParseResult parseBases(AsmParser &parser, StringRef keyword,
                              std::optional<unsigned> &rank,
                              SmallVectorImpl<int64_t> &out) {
  if (parser.parseKeyword(keyword) || parser.parseEqual())
    return failure();
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
    SmallVector<int64_t> basis;
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
          int64_t v;
          if (parser.parseInteger(v))
            return failure();
          basis.push_back(v);
          return success();
        }))
      return failure();
    if (!rank)
      rank = basis.size();
    if (basis.size() != *rank || basis.empty()) {
      parser.emitError(parser.getCurrentLocation(),
                       "every layout basis must have the same, non-zero rank");
      return failure();
    }
    out.append(basis);
    return success();
  });
}

Attribute LayoutAttr::parse(AsmParser &parser, Type) {
  SMLoc startLoc = parser.getCurrentLocation();
  std::optional<unsigned> rank;
  SmallVector<int64_t> regs, lanes, warps;
  if (parser.parseLess() || parseBases(parser, "regs", rank, regs) ||
      parser.parseComma() || parseBases(parser, "lanes", rank, lanes) ||
      parser.parseComma() || parseBases(parser, "warps", rank, warps))
    return {};
  // All-empty lists need an explicit rank: `, rank = 2`.
  if (succeeded(parser.parseOptionalComma())) {
    int64_t r;
    if (parser.parseKeyword("rank") || parser.parseEqual() ||
        parser.parseInteger(r))
      return {};
    if (rank && *rank != r) {
      parser.emitError(parser.getCurrentLocation(), "rank does not match bases");
      return {};
    }
    rank = r;
  }
  if (parser.parseGreater())
    return {};
  if (!rank) {
    parser.emitError(startLoc, "layout with no bases needs `rank = N`");
    return {};
  }
  return parser.getChecked<LayoutAttr>(parser.getContext(), *rank, regs, lanes,
                                       warps);
}

static void printBases(AsmPrinter &p, unsigned rank, ArrayRef<int64_t> b) {
  p << "[";
  for (size_t i = 0; i < b.size(); i += rank) {
    if (i)
      p << ", ";
    p << "[";
    llvm::interleaveComma(b.slice(i, rank), p);
    p << "]";
  }
  p << "]";
}

void LayoutAttr::print(AsmPrinter &p) const {
  p << "<regs = ";
  printBases(p, getRank(), getRegs());
  p << ", lanes = ";
  printBases(p, getRank(), getLanes());
  p << ", warps = ";
  printBases(p, getRank(), getWarps());
  if (getRegs().empty() && getLanes().empty() && getWarps().empty())
    p << ", rank = " << getRank();
  p << ">";
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 unsigned rank, ArrayRef<int64_t> regs,
                                 ArrayRef<int64_t> lanes,
                                 ArrayRef<int64_t> warps) {
  if (rank == 0)
    return emitError() << "layout rank must be positive";
  for (ArrayRef<int64_t> b : {regs, lanes, warps}) {
    if (b.size() % rank)
      return emitError() << "layout bases must have " << rank << " components";
    for (int64_t v : b)
      if (v < 0 || (v & (v - 1)))
        return emitError() << "layout basis components must be 0 or a power "
                              "of two, got "
                           << v;
  }
  if (lanes.size() / rank != 5)
    return emitError() << "a layout needs exactly 5 lane bases (32 lanes), got "
                       << lanes.size() / rank;
  return success();
}

Operation *TileDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto tileType = dyn_cast<TileType>(type);
  auto typed = dyn_cast<TypedAttr>(value);
  if (!tileType || !typed || typed.getType() != tileType.getElementType())
    return nullptr;
  return FullOp::create(builder, loc, tileType, typed);
}

ScheduleAttr mlir::tile::toAttr(MLIRContext *ctx, const ::tile::Schedule &s) {
  return ScheduleAttr::get(ctx, s.numWarps, s.minBlocks, s.numStages, s.tma,
                           s.tmaA, s.tmaStore, s.pingpong, s.producer,
                           s.persistent, s.ctaPrograms, s.l2Group, s.reverseX,
                           s.indexAhead, s.cpAsync);
}

static ::tile::Schedule makeSchedule(int64_t numWarps, int64_t minBlocks,
                                     int64_t numStages, bool tma, bool tmaA,
                                     bool tmaStore, bool pingpong,
                                     bool producer, bool persistent,
                                     int64_t ctaPrograms, int64_t l2Group,
                                     bool reverseX, bool indexAhead,
                                     bool cpAsync) {
  ::tile::Schedule s;
  s.numWarps = numWarps;
  s.minBlocks = minBlocks;
  s.numStages = numStages;
  s.tma = tma;
  s.tmaA = tmaA;
  s.tmaStore = tmaStore;
  s.pingpong = pingpong;
  s.producer = producer;
  s.persistent = persistent;
  s.ctaPrograms = ctaPrograms;
  s.l2Group = l2Group;
  s.reverseX = reverseX;
  s.indexAhead = indexAhead;
  s.cpAsync = cpAsync;
  return s;
}

::tile::Schedule mlir::tile::fromAttr(ScheduleAttr a) {
  return makeSchedule(a.getNumWarps(), a.getMinBlocks(), a.getNumStages(),
                      a.getTma(), a.getTmaA(), a.getTmaStore(),
                      a.getPingpong(), a.getProducer(), a.getPersistent(),
                      a.getCtaPrograms(), a.getL2Group(), a.getReverseX(),
                      a.getIndexAhead(), a.getCpAsync());
}

// The one check of a schedule is tile::Schedule::validate().
LogicalResult ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   int64_t numWarps, int64_t minBlocks,
                                   int64_t numStages, bool tma, bool tmaA,
                                   bool tmaStore, bool pingpong, bool producer,
                                   bool persistent, int64_t ctaPrograms,
                                   int64_t l2Group, bool reverseX,
                                   bool indexAhead, bool cpAsync) {
  std::string why =
      makeSchedule(numWarps, minBlocks, numStages, tma, tmaA, tmaStore,
                   pingpong, producer, persistent, ctaPrograms, l2Group,
                   reverseX, indexAhead, cpAsync)
          .validate();
  if (!why.empty())
    return emitError() << "invalid schedule: " << why;
  return success();
}

ScheduleAttr mlir::tile::getSchedule(Operation *op) {
  for (Operation *p = op; p; p = p->getParentOp())
    if (auto a = p->getAttrOfType<ScheduleAttr>(kScheduleAttr))
      return a;
  MLIRContext *ctx = op ? op->getContext() : nullptr;
  return toAttr(ctx, ::tile::Schedule());
}
