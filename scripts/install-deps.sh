#!/usr/bin/env bash
# Installs every Debian package Accel's build and tests need (Debian 12), and
# the Python tests' PyPI packages into build/pyenv. Runs apt-get and pip only
# when something is missing, so it is cheap to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

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
  # ... and its spirv-opencl SPIR-V (the Level Zero backend's format): the
  # LLVM/SPIR-V translator of clang 14's LLVM
  llvm-spirv-14
  # the OpenCL backend's runtime here: PoCL on the CPU, the ICD loader, clinfo
  pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo
  # the Vulkan backend's runtime here: Mesa's lavapipe on the CPU, the loader, vulkaninfo
  mesa-vulkan-drivers libvulkan-dev vulkan-tools
  # the Vulkan backend reflects SPIR-V with SPIRV-Cross; the corpus names each
  # SPIR-V entry point after its kernel with glslangValidator
  libspirv-cross-c-shared-dev glslang-tools
  # the Level Zero backend's tests: the real loader without a driver (it reports zero devices and zeInit's result)
  libze1
  # the ABI baseline check (abidiff)
  abigail-tools
  # accel-runtime-bench's baseline: oneTBB's task_group (bench/runtime_bench.cc)
  libtbb-dev
  # libaccel-runtime's object store: crc32 of spill files
  zlib1g-dev
  # `accel-info serve` (docs/dashboard.md): its HTTP server (cpp-httplib), and
  # its tests: promtool (prometheus) checks /metrics, headless chromium loads the page
  libcpp-httplib-dev prometheus chromium
  # the Python package (python/): its extension and python.pytest
  python3-dev python3-pybind11 pybind11-dev python3-numpy python3-pytest
  # ... and the virtual environment for its PyPI test dependencies (below)
  python3-venv
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The Python tests' PyPI dependencies (python/requirements-test.txt: numpy 2,
# jax on the CPU) in build/pyenv, a virtual environment of /usr/bin/python3,
# the interpreter the extension is built for; pip's cache stays in the build
# tree. Re-created only when the requirements change. ACCEL_SKIP_PYPI=1 skips
# it (python.pytest then runs on Debian's numpy and says what it skips).
requirements=python/requirements-test.txt
venv=build/pyenv
if [ "${ACCEL_SKIP_PYPI:-0}" = 1 ]; then
  echo "install-deps: ACCEL_SKIP_PYPI=1: not installing $requirements"
else
  stamp="$(sha256sum "$requirements" | cut -d' ' -f1) $(/usr/bin/python3 -c 'import sys; print(sys.version)' | head -1)"
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.accel-requirements" 2>/dev/null)" != "$stamp" ]; then
    echo "install-deps: installing $requirements into $venv"
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    PIP_CACHE_DIR=build/cache/pip PIP_DISABLE_PIP_VERSION_CHECK=1 \
      "$venv/bin/python" -m pip install -q -r "$requirements"
    echo "$stamp" >"$venv/.accel-requirements"
  else
    echo "install-deps: $venv has $requirements"
  fi
fi
