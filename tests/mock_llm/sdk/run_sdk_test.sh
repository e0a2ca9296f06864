#!/bin/sh
# ctest mock_llm_official_sdks: runs sdk_check.mjs (the official @anthropic-ai/sdk and openai
# npm packages) against a real loopr-mock-llm. Usage: run_sdk_test.sh MOCK_LLM_BIN CACHE_DIR
# The packages are installed into CACHE_DIR (under the build tree) once, and again only when
# package.json changes. Without node/npm, or if the install fails, it says why and exits 77
# (ctest SKIP_RETURN_CODE).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../mock_llm_server.sh"
mock_llm_test_args "$@"

command -v node >/dev/null 2>&1 || { echo "SKIP: node is not installed"; exit $SKIP; }
command -v npm >/dev/null 2>&1 || { echo "SKIP: npm is not installed"; exit $SKIP; }
[ -x "$bin" ] || { echo "loopr-mock-llm not found at $bin (build it first)"; exit 1; }

if ! cmp -s "$here/package.json" "$cache/package.json" ||
   [ ! -f "$cache/node_modules/@anthropic-ai/sdk/package.json" ] ||
   [ ! -f "$cache/node_modules/openai/package.json" ]; then
  npm_install_or_skip "the SDKs"
fi
# Node resolves packages next to the script, so it runs from the cache directory.
cp "$here/sdk_check.mjs" "$cache/sdk_check.mjs"

start_mock_llm

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
