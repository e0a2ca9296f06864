#!/usr/bin/env bash
# The soak (issue 47 item 6): ONE daemon serves the same small tree (plan → spec → phase → code,
# a scripted mock model, merge: auto) N times in a row. After each checkpoint (10, 100, … trees)
# it prints Markdown table rows: time per tree over the last stretch, the daemon's RSS, the store
# and .loopr/logs on disk; at the end the RSS of a daemon restarted on the same store, which the
# goal compares with (RSS after 1,000 trees within 10 % + 8 MiB of it). Figures only, no asserts.
#
#   soak.sh LOOPR_BIN MOCK_BIN [CHECKPOINTS="10 100"]   (the last checkpoint is N)
set -euo pipefail
loopr=$1
mock=$2
checkpoints=${3:-"10 100"}

# LOOPR_SOAK_TMP=DIR puts the repository and the store there (e.g. a tmpfs: what the disk costs).
dir=$(mktemp -d "${LOOPR_SOAK_TMP:-/tmp}/loopr-soak-XXXXXX")
mock_pid=
cleanup() {
  "$loopr" -C "$dir/repo" daemon stop >/dev/null 2>&1 || true
  if [ -n "$mock_pid" ]; then kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true; fi
  # LOOPR_SOAK_KEEP=1 keeps the repository, store and logs for a look afterwards.
  if [ -n "${LOOPR_SOAK_KEEP:-}" ]; then echo "soak: kept $dir" >&2; else rm -rf "$dir"; fi
}
trap cleanup EXIT

# The model: each document loop writes its artifact (the path is in its first message), the
# code loop one file; every second turn ends the conversation.
writer() {  # $1: the artifact's body, indented 12
  printf '      tool_use:\n        name: write_file\n        input:\n          path: "{{first_user.1}}"\n          content: |\n%s\n' "$1"
}
{
  printf 'defaults:\n  usage: {input_tokens: 1000, output_tokens: 200}\n  thinking: false\nrules:\n'
  printf '  - name: finish\n    match: {turn: 2}\n    reply: {text: "Done."}\n'
  printf '  - name: plan\n    match: {loop_type: plan, first_user: "`(\\\\.loopr/plans/[^`]+)`"}\n    reply:\n'
  writer "$(printf '# Plan\n\n## Overview\nMake **files**.\n\n## Phases\n1. Write the files.\n\n## Success Criteria\n- check.sh passes.\n\n## Specs to Create\n- spec-alpha: Write the alpha files.' | sed 's/^/            /')"
  printf '  - name: spec\n    match: {loop_type: spec, first_user: "`(\\\\.loopr/specs/[^`]+)`"}\n    reply:\n'
  writer "$(printf '# Spec {{loop_id}}\n\n## Parent Plan\nThe plan.\n\n## Overview\nFiles.\n\n## Phases\n1. **Part one**\n   Write part one.\n   - Files: code/x.txt' | sed 's/^/            /')"
  printf '  - name: phase\n    match: {loop_type: phase, first_user: "`(\\\\.loopr/phases/[^`]+)`"}\n    reply:\n'
  writer "$(printf '# Phase {{loop_id}}\n\n## Parent Spec\nThe spec.\n\n## Task\nWrite the file.\n\n## Specific Work\n- Write it.\n\n## Success Criteria\n- check.sh passes.' | sed 's/^/            /')"
  printf '  - name: code\n    match: {loop_type: code}\n    reply:\n      tool_use:\n        - name: write_file\n          input: {path: "code/{{loop_id}}.txt", content: "made by {{loop_id}}\\n"}\n'
} > "$dir/mock.yml"
"$mock" --script "$dir/mock.yml" --port-file "$dir/port" > "$dir/mock.out" 2>&1 &
mock_pid=$!
for _ in $(seq 400); do [ -s "$dir/port" ] && break; sleep 0.025; done
port=$(cat "$dir/port")

repo=$dir/repo
mkdir -p "$repo/.loopr"
echo 'echo ok' > "$repo/check.sh"
printf '.loopr/state/\n.loopr/run/\n.loopr/worktrees/\n.loopr/archive/\n.loopr/logs/\n' > "$repo/.gitignore"
cat > "$repo/.loopr/config.yml" <<EOF
base_branch: main
merge: auto
baseline: off
llm:
  provider: anthropic
  model: claude-sonnet-5-5
  base_url: http://127.0.0.1:$port
  max_retries: 2
concurrency:
  max_loops: 20
  llm_slots: 8
  requests_per_minute: 100000
limits:
  max_cost_usd: 1000
loops:
  code: {max_iterations: 2, validation: "sh check.sh", iteration_timeout: 1m}
EOF
(cd "$repo" && git init -q -b main . && git config user.name soak && git config user.email s@s &&
  git add -A && git commit -q -m init)

export ANTHROPIC_API_KEY=soak
unset LOOPR_LOG LOOPR_PROVIDER LOOPR_MODEL ANTHROPIC_BASE_URL
# LOOPR_SOAK_WRAP (e.g. "heaptrack -o /tmp/h"): the soaked daemon runs in the foreground under it.
if [ -n "${LOOPR_SOAK_WRAP:-}" ]; then
  $LOOPR_SOAK_WRAP "$loopr" -C "$repo" daemon --foreground > "$dir/daemon.out" 2>&1 &
  for _ in $(seq 1200); do "$loopr" -C "$repo" daemon status >/dev/null 2>&1 && break; sleep 0.05; done
else
  "$loopr" -C "$repo" daemon >/dev/null
fi
daemon_pid() { cat "$repo/.loopr/run/loopr.pid"; }
rss_mib() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
du_mib() { du -sk "$1" 2>/dev/null | awk '{printf "%.1f", $1 / 1024}'; }

done_trees=0
last_checkpoint=0
now_ms() { date +%s%3N; }
for n in $checkpoints; do
  t0=$(now_ms)
  while [ $done_trees -lt "$n" ]; do
    done_trees=$((done_trees + 1))
    t_tree=$(now_ms)
    if ! "$loopr" -C "$repo" submit --wait --yes "Tree $done_trees" >/dev/null 2>"$dir/err"; then
      echo "soak: tree $done_trees did not merge: $(head -c 300 "$dir/err")" >&2
      exit 1
    fi
    # LOOPR_SOAK_TIMES=FILE: one line per tree, "tree ms" (where the time per tree goes up).
    if [ -n "${LOOPR_SOAK_TIMES:-}" ]; then echo "$done_trees $(($(now_ms) - t_tree))" >> "$LOOPR_SOAK_TIMES"; fi
  done
  per=$(( ($(now_ms) - t0) / (n - last_checkpoint) ))
  pid=$(daemon_pid)
  sleep 6  # the daemon hands freed memory back every 5 s (its disk watch): RSS after that

  echo "| soak, one daemon, after $n trees: time per tree (trees $((last_checkpoint + 1))–$n) | $per ms | plan → spec → phase → code, scripted model, merge: auto; submit --wait one after another |"
  echo "| soak, after $n trees: daemon RSS | $(rss_mib "$pid") MiB | VmRSS of the one daemon |"
  echo "| soak, after $n trees: store / .loopr/logs on disk | $(du_mib "$repo/.loopr/state") / $(du_mib "$repo/.loopr/logs") MiB | du of .loopr/state (RocksDB) and .loopr/logs |"
  # LOOPR_SOAK_SMAPS=DIR keeps the daemon's memory map at each checkpoint (what grows, and where).
  if [ -n "${LOOPR_SOAK_SMAPS:-}" ]; then cp "/proc/$pid/smaps" "$LOOPR_SOAK_SMAPS/smaps.$n"; fi
  last_checkpoint=$n
done

# Git alone on the soaked repository: every loop (plan, spec, phase, code) and the integration
# gate makes a worktree, a full checkout of `main`, and `main` gains ~4 files per tree (the
# artifacts and the code file). What `git worktree add` costs at the first tree's commit and at
# the last one is the part of the time per tree that grows with the repository, not with loopr.
git_add_ms() {  # $1: commit; median of 5 `git worktree add --detach` (each removed again)
  local times=() i t0
  for i in 1 2 3 4 5; do
    t0=$(now_ms)
    git -C "$repo" worktree add -q --detach "$dir/git-wt" "$1" >/dev/null 2>&1
    times+=($(($(now_ms) - t0)))
    git -C "$repo" worktree remove --force "$dir/git-wt" >/dev/null 2>&1
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 3p
}
first=$(git -C "$repo" log --format='%H %s' main | awk '/loopr\(code-001-001-001\)/ {print $1; exit}')
if [ -n "$first" ]; then
  echo "| soak: \`git worktree add\` alone, at tree 1 / at tree $done_trees | $(git_add_ms "$first") / $(git_add_ms main) ms | $(git -C "$repo" ls-tree -r "$first" | wc -l) / $(git -C "$repo" ls-tree -r main | wc -l) files; a tree makes 5 such checkouts (4 loops + the integration gate) |"
fi

# The same store, a fresh daemon: what the goal compares with.
"$loopr" -C "$repo" daemon stop >/dev/null
"$loopr" -C "$repo" daemon >/dev/null
"$loopr" -C "$repo" --json list >/dev/null
sleep 1
echo "| soak: RSS of a daemon restarted on the store of $done_trees trees | $(rss_mib "$(daemon_pid)") MiB | after \`loopr list\`; goal: the soaked daemon within 10 % + 8 MiB of this |"
echo "| soak: \`loopr gc --older-than 0s\` after $done_trees trees | $("$loopr" -C "$repo" --json gc --older-than 0s | python3 -c 'import json,sys; r=json.load(sys.stdin); print("%d log folders, %.1f MiB of logs, %.1f MiB in all" % (r["logs"], r["logs_bytes"]/1048576, r["bytes_freed"]/1048576))') | then .loopr/logs holds $(du_mib "$repo/.loopr/logs") MiB |"
