//===- Frontend.cpp - the public entry points of the frontend -------------===//
#include "lib/Frontend/Frontend.h"

#include "lib/Frontend/ASTDump.h"
#include "lib/Frontend/Lexer.h"
#include "lib/Frontend/MLIRGen.h"
#include "lib/Frontend/Parser.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace ::tile::frontend;

namespace {
/// The files of one compilation: the main buffer (file 0) and the files it
/// imports, each lexed with its own index in every SrcLoc.
struct Sources {
  MLIRContext &context;
  llvm::SourceMgr &sourceMgr;
  const std::vector<std::string> &includeDirs;
  std::vector<std::string> names;
  llvm::StringSet<> seen; ///< real paths already read
  static constexpr unsigned kMaxFiles = 256;

  void error(unsigned file, SrcLoc l, const llvm::Twine &msg) {
    emitError(FileLineColLoc::get(StringAttr::get(&context, names[file]),
                                  l.line, l.col))
        << msg;
  }

  /// Lexes and parses `text` as file `file` into `part`.
  bool parse(llvm::StringRef text, unsigned file, Program &part) {
    ErrorFn fail = [&](SrcLoc l, const std::string &msg) {
      error(file, l, msg);
    };
    std::vector<Token> tokens;
    if (!lex(text, fail, tokens))
      return false;
    for (Token &t : tokens)
      t.loc.file = file;
    return Parser(std::move(tokens), fail).parseProgram(part);
  }

  /// Where `path`, imported by file `from`, is: beside `from`, then in each
  /// include directory. Empty when none exists.
  std::string resolve(llvm::StringRef path, unsigned from) {
    llvm::SmallVector<std::string, 4> candidates;
    if (llvm::sys::path::is_absolute(path)) {
      candidates.push_back(path.str());
    } else {
      llvm::SmallString<256> p(llvm::sys::path::parent_path(names[from]));
      llvm::sys::path::append(p, path);
      candidates.push_back(std::string(p));
      for (const std::string &dir : includeDirs) {
        llvm::SmallString<256> q(dir);
        llvm::sys::path::append(q, path);
        candidates.push_back(std::string(q));
      }
    }
    for (const std::string &c : candidates)
      if (llvm::sys::fs::is_regular_file(c))
        return c;
    return {};
  }

  /// Reads the imports of `part` (parsed from file `from`), depth first,
  /// and moves every declaration into `program`.
  bool expand(Program &part, unsigned from, Program &program) {
    for (const Import &im : part.imports) {
      std::string path = resolve(im.path, from);
      if (path.empty()) {
        std::string dirs;
        for (const std::string &d : includeDirs)
          dirs += ", " + d;
        error(from, im.loc,
              "cannot find imported file '" + im.path + "' (looked beside " +
                  names[from] + (dirs.empty() ? "" : " and in") + dirs +
                  "; add a directory with -I)");
        return false;
      }
      llvm::SmallString<256> real;
      if (llvm::sys::fs::real_path(path, real))
        real = path;
      if (!seen.insert(real).second)
        continue; // read once, however often imported
      if (names.size() >= kMaxFiles) {
        error(from, im.loc, "too many imported files (the limit is " +
                                llvm::Twine(kMaxFiles) + ")");
        return false;
      }
      auto buffer = llvm::MemoryBuffer::getFile(path);
      if (!buffer) {
        error(from, im.loc, "cannot read imported file '" + path +
                                "': " + buffer.getError().message());
        return false;
      }
      unsigned file = names.size();
      names.push_back(path);
      llvm::StringRef text = (*buffer)->getBuffer();
      sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
      Program sub;
      if (!parse(text, file, sub) || !expand(sub, file, program))
        return false;
    }
    for (auto &k : part.kernels)
      program.kernels.push_back(std::move(k));
    for (auto &f : part.fns)
      program.fns.push_back(std::move(f));
    return true;
  }
};

/// Lexes and parses the main buffer of `sourceMgr` into `program`, with the
/// files it imports when `imports` (names: the file of each SrcLoc::file).
bool parseSources(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                  const std::vector<std::string> &includeDirs, bool imports,
                  Program &program, std::vector<std::string> &names) {
  if (sourceMgr.getNumBuffers() == 0) {
    emitError(UnknownLoc::get(&context)) << "no input";
    return false;
  }
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  Sources s{context, sourceMgr, includeDirs, {}, {}};
  s.names.push_back(buffer->getBufferIdentifier().str());
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(s.names[0], real))
    s.seen.insert(real);
  bool ok;
  if (!imports) {
    ok = s.parse(buffer->getBuffer(), 0, program);
  } else {
    Program main;
    ok = s.parse(buffer->getBuffer(), 0, main) && s.expand(main, 0, program);
    program.imports = std::move(main.imports);
  }
  names = std::move(s.names);
  return ok;
}
} // namespace

namespace tile::frontend {

bool dumpAST(MLIRContext &context, llvm::SourceMgr &sourceMgr,
             llvm::raw_ostream &os) {
  Program program;
  std::vector<std::string> names;
  if (!parseSources(context, sourceMgr, {}, /*imports=*/false, program, names))
    return false;
  dumpProgram(program, os);
  return true;
}

OwningOpRef<ModuleOp> buildModule(MLIRContext &context,
                                  llvm::SourceMgr &sourceMgr,
                                  const FrontendOptions &options) {
  Program program;
  std::vector<std::string> names;
  if (!parseSources(context, sourceMgr, options.includeDirs,
                    /*imports=*/true, program, names))
    return nullptr;
  return MLIRGen(context, names, program).build(options);
}

} // namespace tile::frontend
