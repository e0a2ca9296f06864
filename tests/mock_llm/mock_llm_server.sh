# Sourced by the ctest scripts that run npm clients against loopr-mock-llm (sdk/, claude_cli/):
# their arguments, the npm install into the build tree's cache, and the server on a free port for
# the script's life. The caller sets $here, its folder (with package.json and script.yml).

SKIP=77  # ctest's SKIP_RETURN_CODE for these tests

# Takes the script's arguments, MOCK_LLM_BIN CACHE_DIR, into $bin and $cache, both absolute
# (the checks run from other folders); makes the cache folder.
mock_llm_test_args() {
  bin=$1
  cache=$2
  mkdir -p "$cache" && cache=$(cd "$cache" && pwd)
  case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
}

# Installs $here/package.json into $cache, saying what ($1). A failed install skips the test and
# leaves no package.json in the cache, so the next run tries again.
npm_install_or_skip() {
  echo "installing $1 into $cache"
  cp "$here/package.json" "$cache/package.json"
  if ! (cd "$cache" && npm install --no-audit --no-fund --loglevel=error >npm-install.log 2>&1); then
    echo "SKIP: npm install failed (log: $cache/npm-install.log):"
    tail -n 5 "$cache/npm-install.log"
    rm -f "$cache/package.json"
    exit $SKIP
  fi
}

# Stops the server (when it runs) and removes $work.
mock_llm_cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}

# Makes the temp folder $work (removed on exit, the server stopped) and starts loopr-mock-llm on
# $here/script.yml logging to $work/requests.jsonl; returns once it listens, with its pid in
# $pid and its port in $port. A server that does not come up within 10 s fails the test.
start_mock_llm() {
  work=$(mktemp -d)
  pid=
  trap mock_llm_cleanup EXIT
  "$bin" --script "$here/script.yml" --port-file "$work/port" --log "$work/requests.jsonl" \
    2>"$work/server.log" &
  pid=$!
  # The port file is written atomically once the server listens.
  tries=0
  while [ ! -s "$work/port" ]; do
    tries=$((tries + 1))
    if [ $tries -gt 500 ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "loopr-mock-llm did not start:"; cat "$work/server.log"; exit 1
    fi
    sleep 0.02
  done
  port=$(cat "$work/port")
}
