#!/usr/bin/env bash
# Every GPU check of the CUDA backend in one go (backends/cuda/README.md, "The GPU check"), in two steps:
#
#   scripts/gpu-check.sh stage [BUILD] [STAGE]    here, where the tree was built (no GPU needed)
#       copies what the checks run from BUILD (default build/gpu, a `default`-preset tree with the targets
#       accel_backend_cuda accel-info accel-conformance accel-bench accel_conformance_corpus) into STAGE (default
#       build/gpu-stage): bin/, lib/ (libaccel and the backend), share/accel (manifests, corpus), the backend's
#       expectations.json, and in STAGE/deps every shared library the binaries need beyond glibc and the C++
#       runtime (hwloc, fmt, ...), which a bare GPU machine may lack. A few MiB; carry STAGE to the GPU machine.
#
#   scripts/gpu-check.sh run [STAGE] OUT          on the GPU machine, from the repository root
#       runs, each under a time limit, within 8 minutes in all:
#         1. accel-info --loader-debug -v, topo and --json on the CUDA backend alone; --loader-debug with
#            CUDA_VISIBLE_DEVICES empty (zero devices, the driver's reason); with every staged backend (the GPU
#            counted once across CUDA, Vulkan and OpenCL where the machine has their loaders; informative)
#         2. accel-conformance --profile multi-device (every profile: abi, query, memory, streams, execution,
#            multi-device) on every CUDA device, with backends/cuda/expectations.json
#         3. a cubin check: execution.kernels.fill from a corpus holding only the corpus's sm_90 cubin
#         4. accel-bench --backends cuda --native: Accel against raw cuLaunchKernel / cuMemcpy*Async
#       and writes into OUT: summary.txt (the machine, each step's exit code and duration), accel-info.txt,
#       accel-info.json, conformance.txt, cert.json, junit.xml, bench.txt, bench.json. Exit 0 when every step
#       passed.
set -u

die() { echo "gpu-check: $*" >&2; exit 2; }

stage() {
  local build=${1:-build/gpu} out=${2:-build/gpu-stage}
  [ -x "$build/bin/accel-info" ] || die "$build/bin/accel-info is missing: cmake --preset default -B $build && cmake --build $build --target accel_backend_cuda accel-info accel-conformance accel-bench accel_conformance_corpus"
  for t in accel-conformance accel-bench; do [ -x "$build/bin/$t" ] || die "$build/bin/$t is missing"; done
  [ -f "$build/lib/accel/backends/libaccel_backend_cuda.so" ] || die "$build has no CUDA backend"
  [ -f "$build/share/accel/conformance/corpus/corpus.json" ] || die "$build has no kernel corpus (target accel_conformance_corpus)"
  rm -rf "$out"
  mkdir -p "$out/bin" "$out/lib" "$out/share" "$out/deps"
  cp -a "$build/bin/accel-info" "$build/bin/accel-conformance" "$build/bin/accel-bench" "$out/bin/"
  cp -a "$build"/lib/libaccel.so* "$out/lib/"
  mkdir -p "$out/lib/accel/backends"
  cp -a "$build/lib/accel/backends/libaccel_backend_cuda.so" "$out/lib/accel/backends/"
  mkdir -p "$out/share/accel/backends.d"
  cp -a "$build/share/accel/backends.d/cuda.json" "$out/share/accel/backends.d/"
  # The OpenCL and Vulkan backends too, where built: on the GPU machine they show whether the GPU seen through CUDA,
  # Vulkan and OpenCL is one physical device (they report zero devices where the machine has no loader).
  local other
  for other in opencl vulkan; do
    if [ -f "$build/lib/accel/backends/libaccel_backend_$other.so" ]; then
      cp -a "$build/lib/accel/backends/libaccel_backend_$other.so" "$out/lib/accel/backends/"
      cp -a "$build/share/accel/backends.d/$other.json" "$out/share/accel/backends.d/"
    fi
  done
  cp -a "$build/share/accel/conformance" "$out/share/accel/"
  cp -a "$(dirname "$0")/../backends/cuda/expectations.json" "$out/expectations.json"
  # Libraries beyond glibc and the C++ runtime (the GPU machine has newer ones of those, and its own python and
  # nvidia tools need them).
  local f lib
  for f in "$out"/bin/* "$out"/lib/libaccel.so* "$out"/lib/accel/backends/*.so; do
    ldd "$f" 2>/dev/null | awk '/=> \// {print $3}'
  done | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*|libaccel.so*) ;;
      *) cp -L "$lib" "$out/deps/" ;;
    esac
  done
  # RelWithDebInfo carries debug info: stripped, the stage is a few MiB instead of ~80 (the carry limit is 64 MiB).
  if command -v strip >/dev/null; then
    find "$out/bin" "$out/lib" "$out/deps" "$out/share" -type f \( -perm -u+x -o -name '*.so*' \) \
      -exec strip --strip-debug {} + 2>/dev/null || true
  fi
  chmod -R go-w "$out"
  echo "staged $(du -sh "$out" | cut -f1) in $out: carry it, then run: scripts/gpu-check.sh run $out \$OUT"
  ls "$out/deps"
}

# Runs one step with a time limit: step <name> <seconds> <output file> <command...>; appends to the summary.
step() {
  local name=$1 limit=$2 file=$3
  shift 3
  local start end rc
  start=$(date +%s)
  echo "=== $name: $*" >>"$file"
  timeout --kill-after=10 "$limit" "$@" >>"$file" 2>&1
  rc=$?
  end=$(date +%s)
  echo "=== $name: exit $rc after $((end - start)) s" >>"$file"
  printf '%-28s exit %3d  %4d s  (%s)\n' "$name" "$rc" "$((end - start))" "$(basename "$file")" >>"$SUMMARY"
  [ "$rc" -eq 0 ] || FAILED=$((FAILED + 1))
  return 0
}

run() {
  local s=${1:-build/gpu-stage} out=${2:-}
  [ -n "$out" ] || die "usage: scripts/gpu-check.sh run [STAGE] OUT"
  [ -x "$s/bin/accel-info" ] || die "$s is not a staged tree (scripts/gpu-check.sh stage)"
  s=$(cd "$s" && pwd)
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  SUMMARY=$out/summary.txt
  FAILED=0
  chmod -R go-w "$s"  # the loader refuses backends that others can write
  # Our binaries only: the carried libraries come after the machine's own.
  local libs="$s/lib:$s/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local manifest=$s/share/accel/backends.d/cuda.json
  local corpus=$s/share/accel/conformance/corpus
  local info=$out/accel-info.txt
  {
    echo "gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n) ($(uname -m), kernel $(uname -r))"
    if command -v nvidia-smi >/dev/null; then
      nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,memory.total --format=csv 2>&1
      nvidia-smi topo -m 2>&1
    else
      echo "nvidia-smi: not on PATH"
    fi
    echo "missing libraries:"
    for f in "$s"/bin/* "$s"/lib/accel/backends/*.so; do
      LD_LIBRARY_PATH=$libs ldd "$f" 2>&1 | grep "not found" | sed "s|^|  $(basename "$f"): |"
    done
    echo
  } >"$SUMMARY"

  # 1. accel-info: the CUDA devices, their topology, the loader report.
  step "accel-info --loader-debug" 60 "$info" env LD_LIBRARY_PATH="$libs" ACCEL_BACKEND_FILES="$manifest" \
    "$s/bin/accel-info" --loader-debug -v
  step "accel-info topo" 60 "$info" env LD_LIBRARY_PATH="$libs" ACCEL_BACKEND_FILES="$manifest" \
    "$s/bin/accel-info" topo
  echo "=== accel-info --json (ACCEL_BACKEND_FILES=cuda.json)" >>"$info"
  LD_LIBRARY_PATH="$libs" ACCEL_BACKEND_FILES="$manifest" timeout 60 "$s/bin/accel-info" --json \
    >"$out/accel-info.json" 2>>"$info" || FAILED=$((FAILED + 1))
  # CUDA_VISIBLE_DEVICES is the driver's: empty hides every device, and the loader report says why.
  step "CUDA_VISIBLE_DEVICES=''" 60 "$info" env LD_LIBRARY_PATH="$libs" ACCEL_BACKEND_FILES="$manifest" \
    CUDA_VISIBLE_DEVICES= "$s/bin/accel-info" --loader-debug
  # The GPU through every staged backend (CUDA, and OpenCL and Vulkan where the machine has their loaders): one
  # physical device with one access path per backend. Informative: a machine without those loaders shows CUDA only.
  echo "=== driver libraries on this machine" >>"$info"
  (ldconfig -p 2>/dev/null | grep -E "libcuda.so|libnvidia-ml|libvulkan.so|libOpenCL.so" || true) >>"$info"
  echo "=== every staged backend (the GPU counted once across CUDA, Vulkan and OpenCL)" >>"$info"
  LD_LIBRARY_PATH="$libs" ACCEL_BACKEND_FILES="$(ls "$s"/share/accel/backends.d/*.json | paste -sd:)" \
    timeout 60 "$s/bin/accel-info" --loader-debug >>"$info" 2>&1 || true

  # 2. The certification, every profile up to multi-device.
  step "accel-conformance" 300 "$out/conformance.txt" env LD_LIBRARY_PATH="$libs" \
    "$s/bin/accel-conformance" --backend "$manifest" --profile multi-device --expectations "$s/expectations.json" \
    --corpus "$corpus" --json "$out/cert.json" --junit "$out/junit.xml"

  # 3. cubin: fill_u32 from a corpus that holds only the sm_90 cubin (no LOCAL_MEMORY: reduce_u32 needs PTX).
  if [ -f "$corpus/cubin/corpus.cubin" ]; then
    local cubin_dir
    cubin_dir=$(mktemp -d)
    mkdir -p "$cubin_dir/cubin"
    cp "$corpus/cubin/corpus.cubin" "$cubin_dir/cubin/"
    printf '{"format_version": 1, "kernels": {"fill_u32": {"cubin": "cubin/corpus.cubin"}}, "missing": {}}\n' \
      >"$cubin_dir/corpus.json"
    step "cubin (execution.kernels.fill)" 120 "$out/conformance.txt" env LD_LIBRARY_PATH="$libs" \
      "$s/bin/accel-conformance" --backend "$manifest" --profile execution --corpus "$cubin_dir" \
      --filter 'execution.kernels.fill*'
  else
    echo "cubin                        skipped: the corpus has no cubin (corpus.json: missing)" >>"$SUMMARY"
  fi

  # 4. accel-bench against the raw driver API (figures only, never a pass/fail on a figure).
  step "accel-bench --native" 240 "$out/bench.txt" env LD_LIBRARY_PATH="$libs" ACCEL_BACKEND_FILES="$manifest" \
    "$s/bin/accel-bench" --backends cuda --native --sizes 4K,1M,16M,256M --corpus "$corpus" \
    --json "$out/bench.json"

  echo >>"$SUMMARY"
  echo "$FAILED step(s) failed" >>"$SUMMARY"
  cat "$SUMMARY"
  [ "$FAILED" -eq 0 ]
}

case "${1:-}" in
  stage) shift; stage "$@" ;;
  run) shift; run "$@" ;;
  *) die "usage: scripts/gpu-check.sh stage [BUILD] [STAGE] | run [STAGE] OUT" ;;
esac
