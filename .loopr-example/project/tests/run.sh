#!/bin/sh
# The project's test command: runs every tests/*_test.sh from the project root and prints one
# line per file. Exit status 0 only if all of them pass.
cd "$(dirname "$0")/.." || exit 2
failed=0
for t in tests/*_test.sh; do
  if out=$(sh "$t" 2>&1); then
    echo "ok   $t"
  else
    echo "FAIL $t"
    printf '%s\n' "$out"
    failed=1
  fi
done
exit $failed
