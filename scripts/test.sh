#!/usr/bin/env bash
# Quick start, step 2: build once with ASan + UBSan and run every test on that
# build (ctest: unit, loader, tool and sample tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --workflow --preset asan
