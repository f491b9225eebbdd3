#!/usr/bin/env bash
# Reads `go test -v` output on stdin; prints failures, skips and the per-package result lines,
# and exits non-zero if any test failed or was skipped. A skipped test means a dependency is
# missing: install it in scripts/setup.sh instead.
set -uo pipefail
failed=0 skipped=0
while IFS= read -r line; do
  case "$line" in
    "--- FAIL"*|"FAIL"*|"panic:"*) echo "$line"; failed=1 ;;
    "--- SKIP"*) echo "$line"; skipped=1 ;;
    "ok "*|"?"*) echo "$line" ;;
    "    "*_test.go:*) echo "$line" ;;  # the messages of failing or skipping tests
  esac
done
if [ $skipped -ne 0 ]; then
  echo "test-summary: a test was skipped; every dependency must be installed by scripts/setup.sh" >&2
  exit 1
fi
exit $failed
