//===- MLIRGen.h - AST to tile IR -----------------------------------*- C++ -*-===//
//
// Walks the AST of one kernel and emits a func.func of tile/arith/scf ops.
// Compile-time values (parameters, literals, folded arithmetic, types) are
// kept symbolic in `Val` and only become IR when they meet a run-time value,
// which is how integer literals adapt to the other operand's type. Helper
// `fn`s are inlined at each call. Every user error is an emitError at the
// offending node; IR is only built once its operands have been checked.
//
// MLIRGen.cpp: kernel, params, statements, loops, fn inlining.
// MLIRGenExpr.cpp: expressions, operators, broadcasting, casts.
// MLIRGenBuiltins.cpp: builtin calls (load, dot, reduce_*, ...).
// MLIRGenControl.cpp: run-time if/else, while, early return in a kernel.
// MLIRGenScalar.cpp: scalar loads/stores, reductions to a scalar, math on
// run-time scalars, i32 -> i64 widening.
// MLIRGenTypes.cpp: signedness of frontend types (see Val).
// MLIRGenBits.cpp: '~', bitcast, umulhi. MLIRGenRandom.cpp: Philox.
// MLIRGenRequire.cpp: require(cond), checked at compile time or launch.
// MLIRGenOps.cpp: binary operators. MLIRGenSelect.cpp: where, fma, casts.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "lib/Frontend/AST.h"
#include "lib/Frontend/Frontend.h"

#include "dialects/tile/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"

#include <deque>

namespace tile::frontend {

/// A value during generation: a compile-time constant, a type, a run-time
/// SSA value (scalar, pointer or tile), or nothing (a call without result).
///
/// Signedness: IR integers are signless (as in `arith`). The frontend's
/// types are MLIR types in which an unsigned integer is an unsigned
/// IntegerType (`u32` is `ui32`, `ptr<u32>` is `!tile.ptr<ui32>`); a
/// Kind::Type holds such a type, and a run-time value holds its signless IR
/// value plus `uns` (its integer elements, or its pointee, are unsigned).
/// MLIRGenTypes.cpp converts between the two; ops whose result depends on
/// signedness pick their unsigned form from it.
struct Val {
  /// Fn: a helper function named as a compile-time parameter's value
  /// (`SCORE_MOD = softcap`); calling the parameter inlines it.
  enum Kind { None, Int, Float, Bool, Type, Runtime, Fn } kind = None;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  bool uns = false;  ///< Kind::Runtime: unsigned integer elements or pointee
  mlir::Type type;   ///< Kind::Type
  mlir::Value value; ///< Kind::Runtime
  const FnDecl *fn = nullptr; ///< Kind::Fn

  static Val ofInt(int64_t v) { Val r; r.kind = Int; r.i = v; return r; }
  static Val ofFloat(double v) { Val r; r.kind = Float; r.f = v; return r; }
  static Val ofBool(bool v) { Val r; r.kind = Bool; r.b = v; return r; }
  static Val ofType(mlir::Type t) { Val r; r.kind = Type; r.type = t; return r; }
  static Val ofFn(const FnDecl *f) { Val r; r.kind = Fn; r.fn = f; return r; }
  static Val of(mlir::Value v, bool uns = false) {
    Val r; r.kind = Runtime; r.value = v; r.uns = uns; return r;
  }
  bool isConst() const { return kind == Int || kind == Float || kind == Bool; }
  bool isRuntime() const { return kind == Runtime; }
};

/// The binary operators (also used by max/min and compound assignment).
enum class BinOp { Add, Sub, Mul, Div, Rem, Lt, Le, Gt, Ge, Eq, Ne, And, Or,
                   Max, Min, BitAnd, BitOr, BitXor, Shl, Shr };

/// Frontend types (see Val): `ui32` -> `i32`, `!tile.ptr<ui32>` ->
/// `!tile.ptr<i32>`, tiles elementwise; other types unchanged.
mlir::Type signlessOf(mlir::Type t);
/// True for a bool constant or a run-time i1 scalar or tile.
bool isBoolTyped(const Val &v);
/// True for an unsigned integer type, or a pointer to one.
bool isUnsignedType(mlir::Type t);
/// `t` with its integer elements (or pointee) unsigned when `uns`.
mlir::Type withSignedness(mlir::Type t, bool uns);

/// Names assigned anywhere in `block` (nested blocks included), in order.
void collectAssigned(const Body &block, llvm::SetVector<llvm::StringRef> &out);

/// True for the names of builtin functions (load, dot, exp, ...).
bool isBuiltinFunction(llvm::StringRef name);
/// Builtin constant and type names, which no variable or function may take
/// (they would silently change the meaning of later code).
bool isReservedName(llvm::StringRef name);

class MLIRGen {
public:
  /// `filenames[i]` is the file of SrcLoc::file i.
  MLIRGen(mlir::MLIRContext &ctx, llvm::ArrayRef<std::string> filenames,
          const Program &p);

  mlir::OwningOpRef<mlir::ModuleOp> build(const FrontendOptions &options);

private:
  struct Binding {
    Val val;
    bool isVar = false;
    SrcLoc loc;
    const char *origin = "declared with 'let' (use 'var')";
  };
  using Scope = llvm::StringMap<Binding>;

  mlir::MLIRContext &ctx;
  mlir::OpBuilder builder;
  llvm::SmallVector<mlir::StringAttr> files;
  const Program &program;
  llvm::StringMap<const FnDecl *> fns;
  /// scopes[0] holds the compile-time parameters; a function body sees
  /// scopes[0] and scopes[frameBase..].
  std::deque<Scope> scopes; // a deque: pushing a scope keeps Binding& valid
  size_t frameBase = 1;
  std::vector<std::string> callStack;
  /// Where each helper on callStack was called: ops and errors inside an
  /// inlined helper get a CallSiteLoc (the helper's line, called from here).
  std::vector<SrcLoc> callSites;
  unsigned loopDepth = 0;
  /// Statements and expressions being generated, inlined helpers included;
  /// bounded so that hostile input cannot exhaust the stack.
  unsigned genDepth = 0;
  static constexpr unsigned kMaxGenDepth = 1000;
  bool enterGen(SrcLoc l);
  bool returned = false;
  Val returnValue;
  /// Run-time `if`s being generated around the current statement.
  unsigned runtimeIfDepth = 0;
  /// The `return;`s a kernel may hold: in its body, or directly in a branch
  /// of an `if` there (the rest of the kernel becomes the other branch).
  llvm::SmallPtrSet<const Stmt *, 8> kernelReturns;

  // MLIRGen.cpp
  mlir::Location fileLoc(SrcLoc l);
  mlir::Location loc(SrcLoc l);
  mlir::InFlightDiagnostic error(SrcLoc l);
  const KernelDecl *selectKernel(const FrontendOptions &options);
  /// The kernel whose arguments and body `k` uses (itself, or the end of
  /// its chain of instances), with the nearest instance's override of each
  /// compile-time parameter in `overrides`.
  const KernelDecl *
  resolveInstance(const KernelDecl &k,
                  llvm::StringMap<const ConstParam *> &overrides);
  bool bindParams(const KernelDecl &k, const KernelDecl &root,
                  const llvm::StringMap<const ConstParam *> &overrides,
                  const FrontendOptions &options,
                  mlir::NamedAttrList &params);
  mlir::FailureOr<Val> parseDefine(const ConstParam &p, Val def,
                                   const std::string &text);
  mlir::FailureOr<mlir::Type> resolveType(const TypeRef &t, bool allowPtr);
  Binding *lookup(llvm::StringRef name);
  bool declare(llvm::StringRef name, SrcLoc l, Val v, bool isVar,
               const char *origin = nullptr);
  bool genBlock(const Body &block);
  bool genStmt(const Stmt &s);
  bool genStmtImpl(const Stmt &s);
  bool genLet(const LetStmt &s);
  bool genAssign(const AssignStmt &s);
  bool genFor(const ForStmt &s);
  /// The values a loop body yields for its carried `var`s (IR `types`,
  /// signedness `uns`): each as it was before the loop, or a located error.
  bool carriedYields(llvm::ArrayRef<std::string> carried,
                     llvm::ArrayRef<mlir::Type> types, llvm::ArrayRef<bool> uns,
                     SrcLoc l, llvm::SmallVectorImpl<mlir::Value> &yields);
  bool genIf(const IfStmt &s);
  bool genReturn(const ReturnStmt &s);
  mlir::FailureOr<Val> inlineFn(const FnDecl &fn, const CallExpr &call,
                                std::vector<Val> args);
  const FnDecl *fnValue(const Expr &e);

  // MLIRGenControl.cpp
  bool genKernelBody(const Body &body, size_t from);
  bool genReturningIf(const IfStmt &s, const Body &body, size_t rest);
  bool genReturningIfImpl(const IfStmt &s, const Body &body, size_t rest);
  bool genRuntimeIf(const IfStmt &s, Val cond);
  bool genWhile(const WhileStmt &s);
  bool genKernelReturn(const ReturnStmt &s);
  mlir::FailureOr<mlir::Value> scalarCondition(Val c, SrcLoc l,
                                               llvm::StringRef what);

  // MLIRGenExpr.cpp
  mlir::FailureOr<Val> genExpr(const Expr &e);
  mlir::FailureOr<Val> genExprImpl(const Expr &e);
  mlir::FailureOr<Val> genName(const NameExpr &e);
  mlir::FailureOr<Val> genUnary(const UnaryExpr &e);
  mlir::FailureOr<Val> genBinaryExpr(const BinaryExpr &e);
  mlir::FailureOr<Val> genTernary(const TernaryExpr &e);
  mlir::FailureOr<Val> genIndex(const IndexExpr &e);
public:
  // Shared with the builtins; public so that small helpers can use them.
  mlir::FailureOr<Val> genBinary(BinOp op, Val a, Val b, SrcLoc l);
  mlir::FailureOr<Val> genSelect(Val c, Val a, Val b, SrcLoc l);
  mlir::FailureOr<Val> genFma(Val a, Val b, Val c, SrcLoc l);
  mlir::FailureOr<Val> genCast(Val x, mlir::Type to, SrcLoc l);
  mlir::FailureOr<mlir::Value> materialize(Val v, mlir::Type scalar, SrcLoc l);
  mlir::FailureOr<mlir::Value> toRuntime(Val v, SrcLoc l);
  mlir::FailureOr<mlir::TypedAttr> constAttr(const Val &v, mlir::Type scalar,
                                             SrcLoc l);
  /// `v` as a value of exactly `type` (constants materialised, scalars
  /// splat, tiles broadcast); an error names `what`.
  mlir::FailureOr<mlir::Value> coerce(Val v, mlir::Type type, SrcLoc l,
                                      llvm::StringRef what);
  mlir::FailureOr<mlir::Value> toTile(Val v, llvm::ArrayRef<int64_t> shape,
                                      mlir::Type elem, SrcLoc l);
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b,
                  SrcLoc l, llvm::StringRef what);
  mlir::FailureOr<mlir::Type> commonElemType(Val a, Val b, SrcLoc l,
                                             llvm::StringRef what);
  mlir::Type defaultType(const Val &v);
  /// The frontend type of a run-time value (its IR type with `uns`
  /// applied), and its element type (the type itself for scalars).
  static mlir::Type feType(const Val &v);
  static mlir::Type feElem(const Val &v);
  /// A run-time value whose frontend (element) type is `fe`.
  static Val typed(mlir::Value v, mlir::Type fe);
  // MLIRGenBits.cpp
  mlir::FailureOr<Val> genBitNot(Val x, SrcLoc l);
  mlir::FailureOr<Val> genBitcast(Val x, mlir::Type to, SrcLoc l);
  mlir::FailureOr<Val> genMulHi(Val a, Val b, SrcLoc l);
  static std::string describe(mlir::Type t);
  /// "<what> on f8e4m3 tiles is not supported: ..." (fp8 tiles are loaded,
  /// stored, cast, selected and multiplied, never computed on).
  static std::string noFp8Arithmetic(mlir::Type elem, llvm::StringRef what);
  std::string describe(const Val &v);
  static llvm::ArrayRef<int64_t> shapeOf(const Val &v);

private:
  // MLIRGenBuiltins.cpp
  mlir::FailureOr<Val> genCall(const CallExpr &e);
  mlir::FailureOr<Val> genBuiltin(const CallExpr &e);
  mlir::FailureOr<mlir::Type> typeByName(llvm::StringRef name);
  mlir::FailureOr<llvm::SmallVector<int64_t>> genShape(const Expr &e);
  using Slots = llvm::ArrayRef<const CallArg *>;
  mlir::FailureOr<Val> arg(Slots s, unsigned i);
  mlir::FailureOr<int64_t> constIntArg(const CallExpr &e, Slots s, unsigned i,
                                       llvm::StringRef what);
  mlir::FailureOr<Val> genMemory(const CallExpr &e, Slots s);
  mlir::FailureOr<Val> genDot(const CallExpr &e, Slots s);
  mlir::FailureOr<Val> genReduce(const CallExpr &e, Slots s);
  mlir::FailureOr<Val> genMath(const CallExpr &e, Slots s);
  mlir::FailureOr<Val> genFull(const CallExpr &e, Slots s);

  // MLIRGenScalar.cpp
  mlir::FailureOr<Val> genScalarMemory(const CallExpr &e, Slots s, Val ptr);
  mlir::FailureOr<Val> genReduceToScalar(const CallExpr &e, Val x);
  mlir::FailureOr<Val> genScalarMath(llvm::StringRef name, Val x, SrcLoc l);
public:
  /// i32 -> i64 (sign-extended) where an i32 operand meets an i64 one, so
  /// that mixed arithmetic and comparisons run on i64.
  mlir::LogicalResult widenIntegers(Val &a, Val &b, SrcLoc l);
private:
  // MLIRGenBits.cpp: bitcast, umulhi; MLIRGenRandom.cpp: philox, randint,
  // rand.
  mlir::FailureOr<Val> genBitsBuiltin(const CallExpr &e, Slots s);
  mlir::FailureOr<Val> genRandom(const CallExpr &e, Slots s);
  // MLIRGenRequire.cpp: require(cond), a launch-time precondition.
  mlir::FailureOr<Val> genRequire(const CallExpr &e, Slots s);
};

} // namespace tile::frontend
