#!/usr/bin/env bash
# The baseline loopr is compared with: the same task as a plain bash `while` loop, one process per
# model call (curl to loopr-mock-llm's /v1/messages, streamed like loopr's) and one `sh -c` per
# validation, nothing stored, no git. Prints Markdown table rows like daemon_bench; asserts nothing.
#
#   bash_loop.sh MOCK_BIN [ITERATIONS=3] [CALLS=2] [LATENCY_MS=200] [RUNS=10]
set -euo pipefail
mock=$1
iterations=${2:-3}
calls=${3:-2}
latency=${4:-200}
runs=${5:-10}

dir=$(mktemp -d /tmp/loopr-bash-loop-XXXXXX)
mock_pid=
cleanup() {
  if [ -n "$mock_pid" ]; then kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT

cat > "$dir/mock.yml" <<'EOF'
defaults:
  usage: {input_tokens: 100, output_tokens: 20}
  thinking: false
rules:
  - name: any
    reply: {text: "Done."}
EOF
"$mock" --script "$dir/mock.yml" --port-file "$dir/port" --latency "${latency}ms" > "$dir/mock.out" 2>&1 &
mock_pid=$!
for _ in $(seq 400); do [ -s "$dir/port" ] && break; sleep 0.025; done
port=$(cat "$dir/port")

# A request about the size of loopr's rendered code prompt (~4 KiB).
prompt=$(head -c 3000 /dev/zero | tr '\0' 'p')
printf '{"model":"claude-sonnet-5-5","max_tokens":16000,"stream":true,"messages":[{"role":"user","content":"%s"}]}' \
  "$prompt" > "$dir/request.json"

cat > "$dir/loop.sh" <<EOF
i=1
while :; do
  for c in \$(seq $calls); do
    curl -sS -o /dev/null -X POST "http://127.0.0.1:$port/v1/messages" \\
      -H "x-api-key: bench" -H "anthropic-version: 2026-10-21" -H "content-type: application/json" \\
      --data-binary @"$dir/request.json"
  done
  if LOOPR_ITERATION=\$i sh -c 'test "\$LOOPR_ITERATION" -ge $iterations'; then break; fi
  i=\$((i + 1))
done
EOF

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
mock_before=$(cpu_ticks "$mock_pid")
/usr/bin/time -f '%e %U %S' -o "$dir/time" bash -c "for r in \$(seq $runs); do bash $dir/loop.sh; done"
mock_after=$(cpu_ticks "$mock_pid")
read -r wall user sys < "$dir/time"
hz=$(getconf CLK_TCK)
awk -v wall="$wall" -v user="$user" -v sys="$sys" -v n=$((runs * iterations)) -v calls="$calls" -v lat="$latency" \
    -v mock=$(( mock_after - mock_before )) -v hz="$hz" -v it="$iterations" 'BEGIN {
  per = 1000 * wall / n
  printf "| bash while loop: wall per iteration | %.0f ms | %d runs × %d iterations, %d curl + 1 sh per iteration; model latency %d ms × %d calls |\n", per, n / it, it, calls, lat, calls
  printf "| bash while loop: overhead per iteration | %.1f ms | wall − %d ms of model latency |\n", per - calls * lat, calls * lat
  printf "| bash while loop: CPU per iteration | %.1f ms | bash + curl + sh (user %.2f s, sys %.2f s); mock-llm %.1f ms per call |\n", 1000 * (user + sys) / n, user, sys, 1000 * mock / hz / (n * calls)
}'
