// Test output as loopr compares it: what a test command printed with the parts that change from
// run to run removed (durations, timestamps, temporary paths, addresses, pids, the worktree's
// own path), so two runs that fail the same way compare equal. The stale check ("no progress")
// and the baseline check's "the same failure as the base" both compare these fingerprints.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace loopr::engine {

struct NormalizeOptions {
  /// Folders that stand for "the place the command ran" (a loop's worktree, the baseline's):
  /// each becomes `<WT>`. Worktrees under `.loopr/worktrees/` are recognised without this.
  std::vector<std::string> workdirs;
};

/// The output with volatile parts replaced: ANSI escapes and `\r`-overwritten progress removed;
/// the run folders → `<WT>`; ISO timestamps → `<TS>`; `/tmp/…` paths → `<TMP>`; `0x…` addresses
/// → `0x<ADDR>`; build hashes (`-0123456789abcdef`) → `-<HASH>`; pids, thread ids and goroutine
/// numbers → `<PID>`; durations (`0.20s`, `12 ms`, `1.3 sec`, `0:01:01`, `1m30s`, Go's
/// `(cached)`) → `<T>`, and a duration in parentheses (`✓ adds (3 ms)`, `(0.00s)`) or jest's
/// `, estimated 1 s` dropped; cargo's progress lines (`Compiling`, `Finished`, …) dropped;
/// separator runs (`=====`, `.....`) shortened to three characters; runs of spaces and tabs one
/// space; trailing spaces and blank-line runs gone. A pure function.
std::string normalize_test_output(std::string_view output, const NormalizeOptions& options = {});

/// A short stable fingerprint (16 hex digits, FNV-1a 64) of the normalized output: equal for two
/// runs that fail the same way. Stored in loop and plan records; stable across builds.
std::string output_fingerprint(std::string_view output, const NormalizeOptions& options = {});

/// The names of the failing tests a test command's output lists, sorted and unique: pytest's
/// `FAILED a.py::t` / `ERROR a.py::t`, unittest's `FAIL: t (m.C)`, Go's `--- FAIL: TestX`,
/// cargo's `test x ... FAILED`, ctest's `N - name (Failed)` summary, jest's `● Suite › t`,
/// gradle's `C > t FAILED`, TAP's `not ok N - t`, rspec's `rspec ./spec/x_spec.rb:12`, maven's
/// `[ERROR]   C.t:42`. Empty when none is recognised. At most `limit` names (the first ones in
/// sorted order), each at most 200 bytes. A pure function.
std::vector<std::string> failing_tests(std::string_view output, std::size_t limit = 1000);

}  // namespace loopr::engine
