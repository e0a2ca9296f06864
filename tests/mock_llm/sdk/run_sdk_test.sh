#!/bin/sh
# ctest mock_llm_official_sdks: runs sdk_check.mjs (the official @anthropic-ai/sdk and openai
# npm packages) against a real loopr-mock-llm. Usage: run_sdk_test.sh MOCK_LLM_BIN CACHE_DIR
# The packages are installed into CACHE_DIR (under the build tree) once, and again only when
# package.json changes. Without node/npm, or if the install fails, it says why and exits 77
# (ctest SKIP_RETURN_CODE).
set -u
SKIP=77
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
cache=$2
# Absolute paths: the checks run from other folders.
mkdir -p "$cache" && cache=$(cd "$cache" && pwd)
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac

command -v node >/dev/null 2>&1 || { echo "SKIP: node is not installed"; exit $SKIP; }
command -v npm >/dev/null 2>&1 || { echo "SKIP: npm is not installed"; exit $SKIP; }
[ -x "$bin" ] || { echo "loopr-mock-llm not found at $bin (build it first)"; exit 1; }

mkdir -p "$cache"
if ! cmp -s "$here/package.json" "$cache/package.json" ||
   [ ! -f "$cache/node_modules/@anthropic-ai/sdk/package.json" ] ||
   [ ! -f "$cache/node_modules/openai/package.json" ]; then
  echo "installing the SDKs into $cache"
  cp "$here/package.json" "$cache/package.json"
  if ! (cd "$cache" && npm install --no-audit --no-fund --loglevel=error >npm-install.log 2>&1); then
    echo "SKIP: npm install failed (log: $cache/npm-install.log):"
    tail -n 5 "$cache/npm-install.log"
    rm -f "$cache/package.json"  # so the next run tries again
    exit $SKIP
  fi
fi
# Node resolves packages next to the script, so it runs from the cache directory.
cp "$here/sdk_check.mjs" "$cache/sdk_check.mjs"

work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

"$bin" --script "$here/script.yml" --port-file "$work/port" --log "$work/requests.jsonl" \
  2>"$work/server.log" &
pid=$!
# Poll for the port file (written atomically once the server listens), 10 s at most.
tries=0
while [ ! -s "$work/port" ]; do
  tries=$((tries + 1))
  if [ $tries -gt 500 ] || ! kill -0 "$pid" 2>/dev/null; then
    echo "loopr-mock-llm did not start:"; cat "$work/server.log"; exit 1
  fi
  sleep 0.02
done
port=$(cat "$work/port")

echo "node $(node --version), $(cd "$cache" && node -p "'@anthropic-ai/sdk ' + require('./node_modules/@anthropic-ai/sdk/package.json').version + ', openai ' + require('./node_modules/openai/package.json').version")"
if ! MOCK_LLM_URL="http://127.0.0.1:$port" MOCK_LLM_LOG="$work/requests.jsonl" node "$cache/sdk_check.mjs"; then
  echo "--- requests mock-llm received (last 5):"
  tail -n 5 "$work/requests.jsonl"
  exit 1
fi

# A clean stop on SIGTERM is part of the contract too.
kill -TERM "$pid"
wait "$pid"
status=$?
pid=
[ $status -eq 0 ] || { echo "loopr-mock-llm exited with $status on SIGTERM"; exit 1; }
