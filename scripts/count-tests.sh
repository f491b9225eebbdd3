#!/usr/bin/env bash
# Prints one closing line counting every test that `make test` ran: Go tests (and subtests)
# from the go test logs, plus the frontend's Vitest tests from its log.
set -euo pipefail
dir=${1:-test-artifacts}
go_pass=$(cat "$dir"/go-test*.log | grep -c -E '^\s*--- PASS' || true)
go_fail=$(cat "$dir"/go-test*.log | grep -c -E '^\s*--- FAIL' || true)
# Vitest colours its summary; strip the escape sequences before reading "Tests  N passed".
fe_summary=$(sed -E 's/\x1b\[[0-9;]*m//g' "$dir/frontend-test.log" | grep -E '^ *Tests ' | tail -1)
fe_pass=$(sed -n -E 's/.* ([0-9]+) passed.*/\1/p' <<<"$fe_summary")
fe_fail=$(sed -n -E 's/.* ([0-9]+) failed.*/\1/p' <<<"$fe_summary")
echo "go: $go_pass passed, $go_fail failed"
echo "frontend: ${fe_pass:-0} passed, ${fe_fail:-0} failed"
echo "tests: $((go_pass + ${fe_pass:-0})) passed, $((go_fail + ${fe_fail:-0})) failed"
