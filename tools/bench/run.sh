#!/usr/bin/env bash
# Every loopr benchmark, one table. Builds what it needs (RelWithDebInfo, -j2) in a build folder
# of its own (build-bench/; LOOPR_BENCH_BUILD=DIR reuses another configured one), runs the
# benches, prints ONE Markdown table with the machine and its load. Figures only: nothing here
# asserts on time, and none of it is in ctest. Results and what they mean: tools/bench/RESULTS.md.
#
#   tools/bench/run.sh [--quick] [--no-build] [--worktrees]
#     --quick      skip the 1,000-loop run and use smaller git/engine/soak sizes (a few minutes)
#     --no-build   use the binaries already built
#     --worktrees  only the worktree figures (issue 47 item 1): loopr's add_worktree vs
#                  `git worktree add`, time and disk, on 5,000- and 50,000-file repositories
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${LOOPR_BENCH_BUILD:-$root/build-bench}
quick=0
do_build=1
worktrees_only=0
for a in "$@"; do
  case $a in
    --quick) quick=1 ;;
    --no-build) do_build=0 ;;
    --worktrees) worktrees_only=1 ;;
    *) echo "usage: $0 [--quick] [--no-build] [--worktrees]" >&2; exit 2 ;;
  esac
done

if [ $do_build = 1 ]; then
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOOPR_TESTS=OFF >/dev/null
  fi
  if [ $worktrees_only = 1 ]; then targets=git_bench; else targets="loopr loopr-mock-llm daemon_bench engine_bench git_bench store_bench sandbox_bench provision_bench cost_bench machines_bench"; fi
  nice ninja -C "$build" -j2 $targets >&2
fi
bench=$build/tools/bench
mock=$build/tools/mock-llm/loopr-mock-llm
out=$(mktemp -d /tmp/loopr-bench-run-XXXXXX)
trap 'rm -rf "$out"' EXIT

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
t0=$(date +%s)
step() { echo "== $* ($(( $(date +%s) - t0 )) s, load $(cut -d' ' -f1 /proc/loadavg))" >&2; }

rows=$out/rows
: > "$rows"

git_awk_worktrees() {  # $1: "worktrees files", $2: git_bench's output
  awk -v args="$1" '
    /loopr \(branch \+ add_worktree\)/ {split(args, a, " "); loopr = $0; sub(/.*: /, "", loopr)}
    /git worktree add -b/ {git = $0; sub(/.*: +/, "", git)}
    /ratio loopr/ {m = $NF; sub(/\)/, "", m); printf "| worktree creation (%s worktrees of a %s-file repo): loopr / git worktree add | %s (median of the pairs: %s) | loopr %s, git %s (alternating, and which goes first too) |\n", a[1], a[2], $5, m, loopr, git}
    /^disk per worktree/ {line = $0; sub(/^disk per worktree: /, "", line); printf "| disk per worktree, %s-file repo | %s |  |\n", a[2], line}' "$2"
}

if [ $worktrees_only = 1 ]; then
  # 50,000 files of ~1 KiB take ~200 MiB per worktree: 6 of each side, not 100.
  for args in "20 5000" "6 50000"; do
    step "git_bench $args 0 worktrees-only"
    "$bench/git_bench" $args 0 worktrees-only > "$out/git-wt" 2>&1
    git_awk_worktrees "$args" "$out/git-wt" >> "$rows"
  done
fi

if [ $worktrees_only = 0 ]; then
sizes="1 10 100 $([ $quick = 1 ] || echo 300 1000)"
step "daemon_bench scale $sizes"
for n in $sizes; do
  "$bench/daemon_bench" scale "$n" --iterations 3 --latency-ms 200 --calls 2 >> "$rows"
done
# The curve (issue 32): the daemon's CPU per iteration against the number of loops, from the rows
# above ("N loops: daemon CPU | … | X ms per iteration after start-up …").
awk -F' [|] ' '/ loops: daemon CPU / {n = $1; sub(/^[|] /, "", n); sub(/ loops.*/, "", n);
    if (n == 1) next; v = $3; sub(/ ms per iteration.*/, "", v); ns = ns (ns ? " / " : "") n;
    vs = vs (vs ? " / " : "") v}
  END {if (ns) printf "| curve: daemon CPU per iteration at %s loops | %s ms | flat is the goal (merges and rebases included, validation sh not) |\n", ns, vs}' \
  "$rows" >> "$rows.curve"
cat "$rows.curve" >> "$rows"

# The soak (issue 47 item 6): one daemon, the same small tree again and again.
soak_at=$([ $quick = 1 ] && echo "10" || echo "10 100")
step "soak $soak_at trees"
bash "$root/tools/bench/soak.sh" "$build/loopr" "$mock" "$soak_at" >> "$rows"

step "bash while loop baseline"
bash "$root/tools/bench/bash_loop.sh" "$mock" 3 2 200 10 >> "$rows"

step "daemon_bench recovery 10000"
"$bench/daemon_bench" recovery 10000 --pending 0 >> "$rows"
"$bench/daemon_bench" recovery 10000 --pending 100 >> "$rows"

step "engine_bench"
"$bench/engine_bench" $([ $quick = 1 ] && echo 20 || echo 60) "$mock" > "$out/engine" 2>&1
awk '/orchestration/ {printf "| 1 loop, 1,000-file repo, no model latency: orchestration per iteration p50 / p99 | %s / %s ms | engine_bench, %s\n", $3, $6, "all but model + validation |"}
     /^    [a-z]/ {name=""; for (i=1; $i != "p50"; i++) name=name (name == "" ? "" : " ") $i; printf "| 1 loop, 1,000-file repo: of the orchestration, %s p50 / p99 | %s / %s ms | engine_bench |\n", name, $(i+1), $(i+4)}
     /iteration wall/ {printf "| 1 loop, 1,000-file repo: iteration wall p50 / p99 | %s / %s ms | engine_bench (2 model calls, 1 write_file, validation `false`) |\n", $4, $7}' \
  "$out/engine" >> "$rows"

if [ $quick = 1 ]; then git_args="20 1000 300"; else git_args="100 5000 1000"; fi
step "git_bench $git_args"
"$bench/git_bench" $git_args > "$out/git" 2>&1
awk -v args="$git_args" '
  /loopr \(branch \+ add_worktree\)/ {split(args, a, " "); loopr = $0; sub(/.*: /, "", loopr)}
  /git worktree add -b/ {git = $0; sub(/.*: +/, "", git)}
  /ratio loopr/ {m = $NF; sub(/\)/, "", m); printf "| worktree creation (%s worktrees of a %s-file repo): loopr / git worktree add | %s (median of the pairs: %s) | loopr %s, git %s (alternating, and which goes first too) |\n", a[1], a[2], $5, m, loopr, git}
  /^disk per worktree/ {line = $0; sub(/^disk per worktree: /, "", line); printf "| disk per worktree, %s-file repo | %s |  |\n", a[2], line}
  /checkpoint of a/ {printf "| checkpoint commit, %s change: loopr / git add -A && git commit | %.2f | loopr %s ms, git %s ms (median of 5) |\n", $4, $7 / $15, $7, $15}
  /nothing changed/ {printf "| checkpoint commit, nothing changed | %s ms | loopr (median of 5) |\n", $6}
  /^merge .* branches/ {printf "| merge into the integration branch, %s branches one by one | %s → %s ms | first %s merges → last %s (the merge-base walks read history cached on a kept handle) |\n", $2, $13, $18, $12, $17}' \
  "$out/git" >> "$rows"

# The 50,000-file case (issue 47 item 1): worktrees only, time and disk each.
if [ $quick = 0 ]; then
  step "git_bench 6 50000 0 worktrees-only"
  "$bench/git_bench" 6 50000 0 worktrees-only > "$out/git50k" 2>&1
  git_awk_worktrees "6 50000" "$out/git50k" >> "$rows"
fi

step "store_bench"
"$bench/store_bench" > "$out/store" 2>&1
awk '/^sync/ {printf "| store: synced loop updates/s, iteration appends/s | %s, %s | store_bench (fdatasync each) |\n", $4, $8}
     /^list 10,000/ {printf "| store: list_loops() of 10,000 loops | %s ms | store_bench (full decode) |\n", $4}
     /^count_by_status/ {printf "| store: count_by_status() of 10,000 loops | %s ms | store_bench (what GET /v1/health reads) |\n", $5}' "$out/store" >> "$rows"

step "sandbox_bench"
"$bench/sandbox_bench" $([ $quick = 1 ] && echo 60 || echo 300) >> "$rows"
step "provision_bench"
"$bench/provision_bench" $([ $quick = 1 ] && echo 8 || echo 30) >> "$rows"

step "cost_bench (prompt caching: a 20-turn iteration and the demo tree, cache on and off)"
"$bench/cost_bench" "$mock" "$build/loopr" > "$out/cost" 2>&1 || true
awk '/input cost with caching/ {line = $0; sub(/^ +/, "", line); printf "| prompt caching, one 20-turn code iteration | %s | cost_bench 1 (goal <= 30 %%) |\n", line}
     /hit share/ {line = $0; sub(/^ +/, "", line); printf "| prompt caching, the demo tree | %s | cost_bench 2 (goal >= 70 %%) |\n", line}' \
  "$out/cost" >> "$rows"

step "machines_bench (a Go module's tests: worktree with the repository's caches vs checkout)"
if command -v go >/dev/null; then
  "$bench/machines_bench" $([ $quick = 1 ] && echo 3 || echo 5) >> "$rows" 2> "$out/machines" || true
fi

fi  # worktrees_only = 0

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
ram=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
echo
echo "loopr benchmarks, $started: $(nproc) cores ($cpu), $ram RAM, Linux $(uname -r);"
echo "load average before $load_before, after $load_after; $(( $(date +%s) - t0 )) s; build $(grep -m1 CMAKE_BUILD_TYPE: "$build/CMakeCache.txt" | cut -d= -f2), commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- src include || echo ' + uncommitted src changes')"
echo
echo "| figure | value | how |"
echo "|---|---|---|"
cat "$rows"
