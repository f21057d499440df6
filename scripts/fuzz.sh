#!/usr/bin/env bash
# Runs every fuzz target of the module (go test -fuzz) for FUZZTIME each and
# prints the executions and the result of each. Their seed corpora (and the
# crashers kept under testdata/fuzz/) already run in `go test ./...`.
#
#   scripts/fuzz.sh                  # every target, 30s each
#   FUZZTIME=5s scripts/fuzz.sh      # what CI runs
#   FUZZ='Policy|Event' scripts/fuzz.sh
#
# A crash writes its input to <package>/testdata/fuzz/<Target>/ (commit it:
# it becomes a regression case) and makes the script exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-30s}
FUZZ=${FUZZ:-.}
PARALLEL=${FUZZ_PARALLEL:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
export GOFLAGS=${GOFLAGS:--buildvcs=false}

log=$(mktemp); trap 'rm -f "$log"' EXIT
failed=0
total=0
printf '%-48s %-24s %14s  %s\n' package target execs result
for pkg in $(go list ./...); do
  targets=$(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' | grep -E "$FUZZ" || true)
  for target in $targets; do
    if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -parallel "$PARALLEL" "$pkg" >"$log" 2>&1; then
      result=ok
    else
      result=CRASH
      failed=$((failed + 1))
    fi
    execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    execs=${execs:-0}
    total=$((total + execs))
    printf '%-48s %-24s %14s  %s\n' "${pkg#github.com/ctxpack/ctxpack/}" "$target" "$execs" "$result"
    if [ "$result" != ok ]; then
      sed -n '/--- FAIL/,$p' "$log" | head -40
    fi
  done
done
printf 'total executions: %d, targets that crashed: %d\n' "$total" "$failed"
[ "$failed" -eq 0 ]
