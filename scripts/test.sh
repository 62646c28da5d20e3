#!/usr/bin/env bash
# Quick start, step 2: build once with ASan + UBSan and run every test on that
# build (ctest: unit, loader, tool and sample tests); then the tests labelled
# tsan (streams, loader, scheduler, object store) on a ThreadSanitizer build of
# just what they need (docs/reliability.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --workflow --preset asan
cmake --workflow --preset tsan
