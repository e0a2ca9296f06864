#!/usr/bin/env bash
# Builds the Debian package: installs what is missing, builds what the package holds into
# build/, and runs CPack (cmake/install.cmake). Prints the .deb's path; `lintian` checks it when
# installed. Install it with `sudo apt install ./build/packages/loopr_*.deb`.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
jobs="${LOOPR_JOBS:-$(nproc)}"
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build build -j "$jobs" --target loopr loopr-mock-llm loopr_docs
rm -rf build/packages
if ! out=$(cd build && cpack -G DEB -B "$PWD/packages" 2>&1); then
  echo "$out" >&2
  exit 1
fi
deb=$(ls build/packages/loopr_*.deb)
if command -v lintian >/dev/null 2>&1; then
  lintian --suppress-tags initial-upload-closes-no-bugs "$deb" 2>/dev/null || true
fi
echo "$deb"
