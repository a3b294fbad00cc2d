#!/usr/bin/env bash
# Installs what building and testing tilec needs on Debian 12 (bookworm).
# Idempotent: installs only missing packages, and runs apt-get only when
# something is missing. Extra package names may be given as arguments
# (scripts/bundle.sh asks for xz-utils).
#
# LLVM/MLIR 22 come from Debian's bookworm-security repository on our
# machines. The CUDA toolkit is optional here: the runtime loads the driver
# with dlopen and needs no cuda.h; ptxas (for cubin output and the `ptxas`
# lit feature) is looked up on PATH and in /usr/local/cuda/bin.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

PKGS=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libfmt-dev ninja-build libzstd-dev
  cmake g++ python3
  # LLVM's exported CMake targets name ZLIB::ZLIB (the other -dev libraries
  # they name come with llvm-22-dev).
  zlib1g-dev
  # scripts/sanitize.sh (CI): clang with ASan, UBSan and libFuzzer.
  clang-14 libclang-rt-14-dev
)
# GoogleTest, when the unit or GPU tests use it.
if grep -qsE 'GTest|gtest' "$ROOT"/test/*/CMakeLists.txt; then
  PKGS+=(libgtest-dev)
fi
PKGS+=("$@")

is_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

missing=()
for p in "${PKGS[@]}"; do
  is_installed "$p" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PKGS[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
  elif command -v sudo >/dev/null; then
    SUDO=(sudo)
  else
    echo "install-deps: error: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq
  # Check that apt knows every package before installing any of them.
  unknown=()
  for p in "${missing[@]}"; do
    apt-cache show "$p" >/dev/null 2>&1 || unknown+=("$p")
  done
  if ((${#unknown[@]})); then
    cat >&2 <<MSG
install-deps: error: apt cannot find: ${unknown[*]}
  tilec needs LLVM/MLIR 22 as Debian packages (llvm-22-dev, libmlir-22-dev,
  mlir-22-tools, llvm-22-tools). On Debian 12 they come from bookworm-security;
  elsewhere add the apt.llvm.org repository for your release, e.g.
    deb http://apt.llvm.org/bookworm/ llvm-toolchain-bookworm-22 main
  then run this script again.
MSG
    exit 1
  fi
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Sanity checks of what the build relies on.
for f in /usr/lib/llvm-22/lib/cmake/mlir/MLIRConfig.cmake \
         /usr/lib/llvm-22/bin/FileCheck /usr/lib/llvm-22/bin/lit \
         /usr/lib/llvm-22/bin/llvm-config; do
  if [[ ! -e $f ]]; then
    echo "install-deps: error: $f is missing after installation" >&2
    exit 1
  fi
done

if command -v ptxas >/dev/null || [[ -x /usr/local/cuda/bin/ptxas ]]; then
  echo "install-deps: ptxas found: cubin output and ptxas tests enabled"
else
  echo "install-deps: note: no ptxas (CUDA toolkit): PTX only, ptxas tests unsupported"
fi
