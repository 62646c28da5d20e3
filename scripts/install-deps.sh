#!/usr/bin/env bash
# Installs every Debian package Accel's build and tests need (Debian 12).
# Runs apt-get only when something is missing, so it is cheap to re-run.
set -euo pipefail

packages=(
  # toolchain and build
  build-essential cmake ninja-build ccache pkg-config git
  # libraries
  nlohmann-json3-dev libfmt-dev libcli11-dev libhwloc-dev hwloc
  # hwloc reads the tests' XML machine fixtures through its libxml2 plugin
  libhwloc-plugins
  # tests
  libgtest-dev libgmock-dev python3 python3-jsonschema binutils
  # the profile fuzzer (libFuzzer comes with clang)
  clang libclang-rt-14-dev
  # the conformance runner (sha256 of certified libraries) and its kernel
  # corpus: GLSL to SPIR-V (glslc), SPIR-V validation (spirv-tools); clang
  # above builds the SPIR 1.2 bitcode
  libssl-dev glslc spirv-tools
  # the OpenCL backend's runtime here: PoCL on the CPU, the ICD loader, clinfo
  pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo
  # the Vulkan backend's runtime here: Mesa's lavapipe on the CPU, the loader, vulkaninfo
  mesa-vulkan-drivers libvulkan-dev vulkan-tools
  # the Vulkan backend reflects SPIR-V with SPIRV-Cross; the corpus names each
  # SPIR-V entry point after its kernel with glslangValidator
  libspirv-cross-c-shared-dev glslang-tools
  # the ABI baseline check (abidiff)
  abigail-tools
  # the Python package (python/): its extension and python.pytest
  python3-dev python3-pybind11 pybind11-dev python3-numpy python3-pytest
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
