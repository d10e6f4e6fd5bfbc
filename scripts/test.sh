#!/usr/bin/env bash
# The whole suite, twice: once on SQLite (every test), once on PostgreSQL (the tests under test/
# that reach the backend choice, each service on a fresh database of one throwaway cluster; plugin
# unit tests and the other tests do not touch the database and run once). Installs missing Debian
# peers and builds the web client first. Arguments go to tap; the PostgreSQL pass takes those under test/.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/peers/install.sh || exit 1
# tap ships built with its default plugins, TypeScript's among them (which fails on TypeScript 7).
# On a fresh install the runner would start the first run with that stale build, so rebuild it from
# package.json's "tap" section (with "!@tapjs/typescript") before any test file is spawned.
npx tap build >/dev/null || exit 1
# Every test process loads typebox as a few bundled files (test/helpers/typebox-bundle.ts, imported first by tap's
# "node-arg"), built once here before the test processes start together.
npx node test/helpers/typebox-bundle.ts || exit 1
# Every test file is a process that loads the service's sources anew (about a second of CPU each,
# type stripping and compiling): Node's compile cache keeps that work on disk for the next process
# and the next run (checked against each file's contents, so an edited source is compiled again).
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-$PWD/node_modules/.cache/herald-node-compile}"
# The plugin contract's JavaScript build (what `npm start` and installed plugins import) and the web
# client, from the sources as they are now (npm ci builds both too; a working tree may have moved on).
npm run --silent build:plugin-api >/dev/null || exit 1
if [ -f core/web/vite.config.ts ]; then npm run --silent build:web >/dev/null || exit 1; fi

# The second pass takes the files under test/ whose run can differ on PostgreSQL: those that reach
# the backend choice (HERALD_TEST_DB) through their imports (test/helpers/pg-pass.ts). The others
# run the same code on the same SQLite files in either pass, so they run once, like the plugins'
# unit tests and test/lint (which checks source files); test/scale runs its replicas on PostgreSQL
# in either pass, so the second pass leaves it out too, as it does the browser tests (they check
# the web client; the API paths it calls were, when they were left out, all called by API tests).
pg_args=()
if [ $# -eq 0 ]; then
  sel=(test)
else
  sel=()
  for a in "$@"; do case "$a" in test/*|./test/*|test|./test) sel+=("$a");; esac; done
fi
if [ ${#sel[@]} -gt 0 ]; then
  pg_list=$(npx node test/helpers/pg-pass.ts "${sel[@]}") || exit 1
  while IFS= read -r f; do [ -n "$f" ] && pg_args+=("$f"); done <<<"$pg_list"
fi

# Each pass's output is kept, so that the last lines of a long run (all a CI log may show) name
# every failed file and assertion of both passes.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
failures() {
  grep -E '^# \{ total' "$1" | sed "s/^/  $2 /" >&2
  grep -n -E '^[[:space:]]*not ok ' "$1" | grep -v -E '# (TODO|SKIP)' | head -60 |
    sed "s/^/  $2 /" >&2 || true
}

start=$SECONDS
npx tap "$@" 2>&1 | tee "$logs/sqlite.tap"; sqlite_status=${PIPESTATUS[0]}
sqlite_time=$((SECONDS - start))
pg_status=0; pg_time=0
if [ ${#pg_args[@]} -gt 0 ]; then
  state=$(mktemp -d)
  npx node scripts/peers/postgres-serve.ts "$state/url" & serve=$!
  trap 'kill $serve 2>/dev/null; wait $serve 2>/dev/null; rm -rf "$state" "$logs"' EXIT
  for _ in $(seq 600); do [ -s "$state/url" ] || ! kill -0 $serve 2>/dev/null && break; sleep 0.1; done
  if [ ! -s "$state/url" ]; then echo "could not start PostgreSQL for the second pass" >&2; exit 1; fi
  start=$SECONDS
  HERALD_TEST_DB=postgres HERALD_TEST_PG_URL=$(cat "$state/url") npx tap "${pg_args[@]}" 2>&1 |
    tee "$logs/postgres.tap"; pg_status=${PIPESTATUS[0]}
  pg_time=$((SECONDS - start))
fi
if [ $sqlite_status -ne 0 ] || [ $pg_status -ne 0 ]; then
  echo "failed (line of the pass's output, then the line):" >&2
  failures "$logs/sqlite.tap" SQLite
  [ -f "$logs/postgres.tap" ] && failures "$logs/postgres.tap" PostgreSQL
fi
echo "suite: SQLite pass ${sqlite_time}s (exit ${sqlite_status}), PostgreSQL pass ${pg_time}s (exit ${pg_status})" >&2
[ $sqlite_status -eq 0 ] && [ $pg_status -eq 0 ]
