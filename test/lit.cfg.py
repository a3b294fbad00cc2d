# -*- Python -*-
# The tile lit suite. Build paths come from lit.site.cfg.py (generated).
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TILE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".tile", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tile_obj_root, "test")

# Unit/, GPU/ and Install/ (an outside CMake project) hold C++ tests run by
# ctest; Inputs/ holds files that tests read, not tests.
config.excludes = ["Inputs", "Unit", "GPU", "Install", "CMakeLists.txt", "README.md",
                   "lit.cfg.py", "lit.site.cfg.py"]

llvm_config.with_system_environment(
    ["HOME", "TMPDIR", "TMP", "TEMP", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
     "CUDA_HOME", "CUDA_PATH"])
# FileCheck, and `not` / `count` after a pipe.
llvm_config.use_default_substitutions()
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

# `not` and `count` at the start of a RUN line are found through PATH; our
# tools come first, then LLVM's.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tile_tools_dir, append_path=True)

config.substitutions.append(("%tile_src_root", config.tile_src_root))
config.substitutions.append(("%examples", os.path.join(config.tile_src_root, "examples")))

tool_dirs = [config.tile_tools_dir, config.llvm_tools_dir]
tools = [
    ToolSubst("tile-opt", unresolved="fatal"),
    ToolSubst("tilec", unresolved="warn"),
    ToolSubst("not", unresolved="fatal"),
    ToolSubst("count", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)


# `REQUIRES: cuda`: a GPU and its driver are usable. TILE_LIT_NO_GPU=1 turns
# the feature off on a GPU machine.
def have_cuda_gpu():
    if os.environ.get("TILE_LIT_NO_GPU"):
        return False
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            r = subprocess.run([smi, "-L"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, timeout=30)
            if r.returncode == 0 and b"GPU" in r.stdout:
                return True
        except (OSError, subprocess.SubprocessError):
            pass
    return os.path.exists("/dev/nvidia0")


if have_cuda_gpu():
    config.available_features.add("cuda")
else:
    lit_config.note("no GPU: tests that REQUIRE cuda are reported UNSUPPORTED")

# `REQUIRES: ptxas`: PTX can be assembled to cubin.
ptxas = shutil.which("ptxas") or next(
    (p for p in ["/usr/local/cuda/bin/ptxas"] if os.access(p, os.X_OK)), None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    llvm_config.with_environment("PATH", os.path.dirname(ptxas),
                                 append_path=True)
