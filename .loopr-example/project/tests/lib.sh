# Helpers for tests/*_test.sh (sourced; run from the project root). Each test file ends with
# `exit $status`.
status=0

# expect OUTPUT CODE [ARGS...]: `./greet ARGS` must print OUTPUT on stdout and exit with CODE.
expect() {
  want_out=$1
  want_code=$2
  shift 2
  got_out=$(sh ./greet "$@" 2>/dev/null)
  got_code=$?
  if [ "$got_out" != "$want_out" ] || [ "$got_code" != "$want_code" ]; then
    echo "  greet $*: expected \"$want_out\" (exit $want_code), got \"$got_out\" (exit $got_code)"
    status=1
  fi
}
