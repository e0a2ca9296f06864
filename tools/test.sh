#!/usr/bin/env bash
# Installs what is missing, configures and builds into build/, runs every test.
# Extra arguments go to ctest (e.g. `tools/test.sh -L unit`, `tools/test.sh -R Config`).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
jobs="${LOOPR_JOBS:-$(nproc)}"
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build build -j "$jobs"
cd build
ctest --output-on-failure -j "$jobs" "$@"
