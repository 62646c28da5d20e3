#!/usr/bin/env bash
# Quick start, step 1: install what is needed, build the default preset, then
# run accel-info and a sample.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --workflow --preset default
build/default/bin/accel-info
build/default/bin/accel-sample-memory-round-trip
# A simulated 8-GPU node: the topology matrix of a shipped sim profile (docs/sim.md).
build/default/bin/accel-info --sim-profile h100-sxm-8 topo
