#!/usr/bin/env bash
# npm run test:node-matrix [-- <vitest filters>]: every vitest project (no coverage) on Node 22, then on Node 24,
# taken from the npm registry's `node` package (NODE_MATRIX="22 24" chooses the majors). CI (.ci/run) runs only
# the cross-version subset on those majors; this is the whole suite, for a release, a nightly job, or a change
# to how the packages use Node (sockets, TLS, streams, timers, AbortSignal, child processes, ESM loading).
# One major at a time: each run already uses the machine's cores (VITEST_MAX_WORKERS=N to choose).
set -euo pipefail
cd "$(dirname "$0")/.."
npm run -s build:all
failed=0
for v in ${NODE_MATRIX:-22 24}; do
  printf '\n== vitest on Node %s\n' "$(npx -y -p "node@$v" -- node --version)"
  npx -y -p "node@$v" -- node node_modules/vitest/vitest.mjs run "$@" || failed=1
done
exit "$failed"
