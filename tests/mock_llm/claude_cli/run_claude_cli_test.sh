#!/bin/sh
# ctest mock_llm_claude_cli: the real claude CLI (npm @anthropic-ai/claude-code 2.1.329, ~360 MB)
# runs one tool-use task against loopr-mock-llm: it must accept everything the CLI sends
# (anthropic-version 2023-06-01, system-role messages, moved cache breakpoints, thinking
# echoed). It runs the claude of tests/agent_clis (tools/install-deps.sh); without it, it is
# opt-in because of the download: LOOPR_CLAUDE_CLI_TEST=1 installs one here, else it skips (77).
# Usage: run_claude_cli_test.sh MOCK_LLM_BIN CACHE_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../mock_llm_server.sh"
mock_llm_test_args "$@"
# The CLI tools/install-deps.sh installed with the other agent CLIs (tests/agent_clis, the same
# pinned version) is used when it is there; else the opt-in install below.
agent_clis=$(cd "$here/../../agent_clis" && pwd)
if [ -x "$agent_clis/node_modules/.bin/claude" ]; then
  claude=$agent_clis/node_modules/.bin/claude
else
  [ "${LOOPR_CLAUDE_CLI_TEST:-0}" = 1 ] || { echo "SKIP: run tools/install-deps.sh (tests/agent_clis), or set LOOPR_CLAUDE_CLI_TEST=1 to install the real claude CLI here (~360 MB)"; exit $SKIP; }
  command -v node >/dev/null 2>&1 || { echo "SKIP: node is not installed"; exit $SKIP; }
  command -v npm >/dev/null 2>&1 || { echo "SKIP: npm is not installed"; exit $SKIP; }
  claude=$cache/node_modules/.bin/claude
fi
if [ "$claude" = "$cache/node_modules/.bin/claude" ] && { ! cmp -s "$here/package.json" "$cache/package.json" || [ ! -x "$claude" ]; }; then
  npm_install_or_skip "the claude CLI"
fi

start_mock_llm
mkdir -p "$work/home" "$work/project"

# The prompt names the project folder so the script can put the file there ({{user.1}}).
(cd "$work/project" && ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=test-key \
  HOME="$work/home" DISABLE_TELEMETRY=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
  timeout 120 "$claude" -p "write the greeting file in ($work/project)" \
  --output-format stream-json --verbose --max-turns 3 --permission-mode acceptEdits) >"$work/out.jsonl" 2>&1
status=$?

fail() {
  echo "FAIL: $1"
  echo "--- claude exit status $status, last lines:"; tail -n 3 "$work/out.jsonl" | cut -c1-400
  echo "--- requests mock-llm received:"; cut -c1-400 "$work/requests.jsonl"
  exit 1
}
[ $status -eq 0 ] || fail "claude exited with $status"
[ "$(cat "$work/project/greeting.txt" 2>/dev/null)" = "hello from mock-llm" ] || fail "the Write tool did not write greeting.txt"
grep -q '"type":"result".*"subtype":"success"' "$work/out.jsonl" || grep -q '"subtype":"success".*"type":"result"' "$work/out.jsonl" || fail "no successful result line"
grep -q 'COMPLETE' "$work/out.jsonl" || fail "the final answer did not arrive"
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  const rules = lines.map((l) => `${l.status}:${l.rule}`).join(" ");
  if (rules !== "200:write 200:done") { console.error("unexpected requests: " + rules); process.exit(1); }
  if (lines[0].headers["anthropic-version"] !== "2023-06-01") { console.error("version " + lines[0].headers["anthropic-version"]); process.exit(1); }
' "$work/requests.jsonl" || fail "mock-llm did not see the expected two requests"
echo "ok: claude $("$claude" --version 2>/dev/null | head -n 1) completed a tool-use task against loopr-mock-llm"
