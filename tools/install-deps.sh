#!/usr/bin/env bash
# Installs the Debian packages loopr builds and tests with (bubblewrap: the sandbox for commands;
# dpkg-dev, help2man, man-db, lintian, zsh, bash-completion: the Debian package, the man pages,
# the completions; slurm-wlm, munge: the one-node Slurm cluster the Slurm executor's tests start;
# chromium: the browser the web UI's tests drive, with tests/browser's pinned npm packages; the
# agent CLIs the claude-code, codex and gemini providers run, pinned in tests/agent_clis:
# @anthropic-ai/claude-code and @openai/codex, whose Linux binaries ship in the packages, and
# @google/gemini-cli, ~880 MB together (npm ci ~10 s from the registry here); skipped with
# LOOPR_SKIP_AGENT_CLIS=1; golang-go: the Go module of the real-project suite and
# tools/bench/machines_bench).
# Idempotent: skips what is installed, runs `apt-get update` at most once, never asks a question
# (works as root with no terminal).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev libboost-system-dev libssl-dev openssl
  libgit2-dev librocksdb-dev libre2-dev
  libcmark-gfm-dev libcmark-gfm-extensions-dev
  libspdlog-dev libfmt-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  curl procps bubblewrap
  slurm-wlm munge
  dpkg-dev help2man man-db lintian zsh bash-completion
  chromium
  golang-go
)
# Node.js for the browser tests: Debian's, unless a node is already installed (another build of
# Node.js, e.g. one that bundles npm, conflicts with Debian's npm package).
if ! command -v node >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# tests/browser's npm packages (playwright-core, pinned by its package-lock.json; it drives the
# chromium above and downloads no browser): installed when missing or when the lock changed.
browser_tests() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/browser"
  [ -f "$dir/package-lock.json" ] || return 0
  if [ -f "$dir/node_modules/.package-lock.json" ] &&
    [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
    return 0
  fi
  echo "install-deps: npm ci in tests/browser" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
}

# tests/agent_clis's pinned CLIs (the end-to-end tests of the agent-CLI providers run
# them against tools/mock-llm): installed when missing or when the lock changed.
agent_clis() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/agent_clis"
  [ -f "$dir/package-lock.json" ] && [ "${LOOPR_SKIP_AGENT_CLIS:-0}" != 1 ] || return 0
  if [ -f "$dir/node_modules/.package-lock.json" ] &&
    [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
    return 0
  fi
  # Both CLIs need Node.js 20 or later (Debian 12's nodejs is 18): said plainly, not an npm error.
  local node_version
  node_version="$(node -p 'process.versions.node' 2>/dev/null || echo none)"
  if [ "${node_version%%.*}" = none ] || [ "${node_version%%.*}" -lt 20 ]; then
    echo "install-deps: Node.js $node_version is too old for the agent CLIs: @openai/codex and" \
      "@google/gemini-cli need Node.js 20 or later. Their end-to-end tests will be skipped;" \
      "install Node.js >= 20 (e.g. with nvm, or NodeSource's packages) and run this again." >&2
    return 0
  fi
  echo "install-deps: npm ci in tests/agent_clis (claude, codex, gemini CLIs)" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
}

if [ ${#missing[@]} -eq 0 ]; then
  browser_tests
  agent_clis
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
    echo "loopr: packages missing: ${missing[*]} (run this script as root, or install them)" >&2
    exit 2
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
browser_tests
agent_clis
