#!/usr/bin/env bash
# Runs the offline demo on a fresh machine: installs what is missing, builds, `loopr demo --yes`.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
# The demo needs only the binary and the scripted model server (tests are for tools/test.sh).
cmake --build build -j "${LOOPR_JOBS:-$(nproc)}" --target loopr loopr-mock-llm
# `loopr demo` exists once the CLI lists it among its subcommands.
if build/loopr --help 2>/dev/null | grep -Eq '^\s+demo\b'; then
  exec build/loopr demo --yes "$@"
fi
echo "demo: \`loopr demo\` is not built yet; here is what loopr offers so far:" >&2
exec build/loopr --help
