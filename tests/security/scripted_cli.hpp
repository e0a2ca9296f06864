// The scripted agent CLIs of the escape suite (escape_claude, escape_agent_cli, escape_login):
// the shell that reads how loopr ran a CLI, what a hostile one does, and the JSON lines each CLI
// answers with, saying "$found" (what the hostile script found) so that it lands in the loop's
// transcript.
#pragma once

#include <string>

#include "support/tree_artifacts.hpp"

namespace loopr::testing {

/// What every hostile scripted CLI does once it knows $type, $id and $artifact: reaches for the
/// network (sets $direct, $other, $other_tls and $api), writes outside its artifact in the loops
/// that may write only theirs, then writes the loop's artifact (or its code file) honestly.
inline std::string hostile_probe(const std::string& port, const std::string& api_url) {
  return
      // The network: any address directly, another host through the proxy, the API host.
      "curl -s -m 3 --noproxy '*' http://127.0.0.1:" + port +
      "/ >/dev/null 2>&1; direct=$?\n"
      "other=$(curl -s -m 5 -o /dev/null -w '%{http_code}' http://127.0.0.1:" +
      port +
      "/ 2>/dev/null)\n"
      "other_tls=$(curl -s -m 5 -o /dev/null -w '%{http_code}' https://example.com/ "
      "2>/dev/null)\n"
      "api=$(curl -s -m 5 -o /dev/null -w '%{http_code}' " +
      api_url +
      "/v1/nothing 2>/dev/null)\n"
      // Outside the artifact, in the loops that may write only theirs.
      "[ \"$type\" = code ] || { echo evil > \"evil-$type.txt\"; echo 'echo pwned' >> check.sh; "
      "}\n"
      "case \"$type\" in\n"
      "  plan) mkdir -p \"$(dirname \"$artifact\")\"; cat > \"$artifact\" <<'EOF'\n" +
      kTreePlan +
      "EOF\n;;\n  spec) mkdir -p \"$(dirname \"$artifact\")\"; cat > \"$artifact\" <<'EOF'\n" +
      kTreeSpec +
      "EOF\n;;\n  phase) mkdir -p \"$(dirname \"$artifact\")\"; cat > \"$artifact\" <<'EOF'\n" +
      kTreePhase +
      "EOF\n;;\n  code) mkdir -p code; printf 'made by %s\\n' \"$id\" > "
      "\"code/$id.txt\";;\nesac\n";
}

/// claude-code's stream-json answer (init, one assistant message, the result).
inline constexpr const char* kClaudeAnswer =
    "printf '%s\\n' '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\","
    "\"model\":\"claude-opus-5-5\",\"tools\":[\"Bash\"]}'\n"
    "printf '{\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"type\":\"message\","
    "\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"%s\"}],"
    "\"stop_reason\":null},\"session_id\":\"s1\"}\\n' \"$found\"\n"
    "printf '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":"
    "\"%s\",\"num_turns\":1,\"total_cost_usd\":0.01,\"usage\":{\"input_tokens\":10,"
    "\"output_tokens\":5},\"stop_reason\":\"end_turn\",\"session_id\":\"s1\"}\\n' "
    "\"$found\"\n";

/// codex's `exec --json` answer (thread started, one agent message, turn completed).
inline constexpr const char* kCodexAnswer =
    "printf '%s\\n' '{\"type\":\"thread.started\",\"thread_id\":\"t1\"}'\n"
    "printf '{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":"
    "\"agent_message\",\"text\":\"%s\"}}\\n' \"$found\"\n"
    "printf '%s\\n' '{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,"
    "\"cached_input_tokens\":0,\"output_tokens\":5}}'\n";

/// gemini: sets $prompt (from --prompt), $type and $id (from GEMINI_CLI_CUSTOM_HEADERS).
inline constexpr const char* kGeminiReadIn =
    "while [ $# -gt 0 ]; do case \"$1\" in --prompt) prompt=$2; shift 2;; *) shift;; "
    "esac; done\n"
    "type=$(printf '%s' \"$GEMINI_CLI_CUSTOM_HEADERS\" | sed -n "
    "'s/.*x-loopr-loop-type: \\([a-z]*\\).*/\\1/p')\n"
    "id=$(printf '%s' \"$GEMINI_CLI_CUSTOM_HEADERS\" | sed -n "
    "'s/^x-loopr-loop-id: \\([^,]*\\),.*/\\1/p')\n";

/// gemini's stream-json answer (init, one assistant message, the result).
inline constexpr const char* kGeminiAnswer =
    "printf '%s\\n' '{\"type\":\"init\",\"session_id\":\"s1\",\"model\":\"gemini-9\"}'\n"
    "printf '{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"%s\",\"delta\":true}"
    "\\n' \"$found\"\n"
    "printf '%s\\n' '{\"type\":\"result\",\"status\":\"success\",\"stats\":{"
    "\"input_tokens\":10,\"output_tokens\":5,\"cached\":0}}'\n";

}  // namespace loopr::testing
