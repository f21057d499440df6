#!/usr/bin/env bash
# Runs every fuzz target of the module (go test -fuzz) for FUZZTIME each and
# prints the executions and the result of each. Their seed corpora (and the
# crashers kept under testdata/fuzz/) already run in `go test ./...`.
#
#   scripts/fuzz.sh                          # every target, 30s each, one at a time
#   FUZZTIME=3s FUZZ_JOBS=2 scripts/fuzz.sh  # what CI runs: two targets at once
#   FUZZ='Policy|Event' scripts/fuzz.sh
#
# Each package's test binary is built once, instrumented for fuzzing
# (go test -c -fuzz), and every target of the package runs from it: a
# `go test -fuzz` per target would link the binary again each time, which
# cost more CPU than four seconds of fuzzing. FUZZ_JOBS targets run at once,
# each with FUZZ_PARALLEL workers (default: the cores divided among the
# jobs). The whole run takes about targets × FUZZTIME / FUZZ_JOBS plus the
# builds.
#
# A crash writes its input to <package>/testdata/fuzz/<Target>/ (commit it:
# it becomes a regression case) and makes the script exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-30s}
FUZZ=${FUZZ:-.}
FUZZ_JOBS=${FUZZ_JOBS:-1}
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
PARALLEL=${FUZZ_PARALLEL:-$(( cores / FUZZ_JOBS > 0 ? cores / FUZZ_JOBS : 1 ))}
export GOFLAGS=${GOFLAGS:--buildvcs=false}
export FUZZTIME PARALLEL

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export work

# Every (package, target) pair, in package order, read from the test files
# (listing them with go test -list would build every test binary first).
git ls-files '*_test.go' | xargs grep -H -o -E '^func Fuzz[A-Za-z0-9_]+\(' \
  | sed -E 's|^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]+)\($|./\1 \2|; s|^[^/][^ ]*_test\.go:func (Fuzz[A-Za-z0-9_]+)\($|. \1|' \
  | sort -u | awk -v re="$FUZZ" '$2 ~ re' > "$work/targets"
if [ ! -s "$work/targets" ]; then
  echo "no fuzz target matches FUZZ=$FUZZ"; exit 1
fi

# fuzz_one PKG TARGET INDEX: runs one target; its log and result go to
# $work/INDEX.log and $work/INDEX.result.
#
# Go's fuzzer can end a run with "context deadline exceeded" when the time
# runs out while a worker is busy, without any failing input: that is
# the clock, not a crash, and the target runs once more. A crash always
# writes its input ("Failing input written to").
#
# The binary runs in the package's directory, as go test runs it, so a
# crasher is written to the package's testdata/fuzz/; interesting inputs
# go to the same cache go test -fuzz uses.
fuzz_one() {
  local pkg=$1 target=$2 i=$3 result=ok try bin
  bin="$work/bin/$(printf '%s' "$pkg" | tr '/.' '__').test"
  for try in 1 2; do
    if (cd "$pkg" && "$bin" -test.run='^$' -test.fuzz="^${target}\$" -test.fuzztime="$FUZZTIME" \
        -test.parallel="$PARALLEL" -test.fuzzcachedir="$fuzzcache/$(go list -f '{{.ImportPath}}' .)") >"$work/$i.log" 2>&1; then
      result=ok; break
    fi
    result=CRASH
    if grep -q 'Failing input written to' "$work/$i.log" || ! grep -q 'context deadline exceeded' "$work/$i.log"; then
      break
    fi
  done
  echo "$result" > "$work/$i.result"
}
export -f fuzz_one

# One instrumented test binary per package that has targets, FUZZ_JOBS
# builds at a time (a link is single-threaded).
mkdir -p "$work/bin"
fuzzcache="$(go env GOCACHE)/fuzz"
export fuzzcache
build_one() {
  local pkg=$1 log
  log="$work/build-$(printf '%s' "$pkg" | tr '/.' '__').log"
  if ! go test -c -fuzz=. -o "$work/bin/$(printf '%s' "$pkg" | tr '/.' '__').test" "$pkg" >"$log" 2>&1; then
    echo "building the fuzz binary of $pkg failed:"; cat "$log"; return 1
  fi
}
export -f build_one
if ! awk '{ print $1 }' "$work/targets" | sort -u | xargs -P "$FUZZ_JOBS" -n 1 bash -c 'build_one "$@"' _; then
  exit 1
fi
awk '{ print $1, $2, NR }' "$work/targets" | xargs -P "$FUZZ_JOBS" -n 3 bash -c 'fuzz_one "$@"' _

failed=0
total=0
printf '%-48s %-24s %14s  %s\n' package target execs result
while read -r pkg target i; do
  result=$(cat "$work/$i.result" 2>/dev/null || echo "NOT RUN")
  # No "execs:" line (a target still gathering its baseline when its time
  # ran out) counts as 0, not as a failure of the script.
  execs=$(grep -o 'execs: [0-9]*' "$work/$i.log" 2>/dev/null | tail -1 | awk '{print $2}' || true)
  execs=${execs:-0}
  total=$((total + execs))
  printf '%-48s %-24s %14s  %s\n' "${pkg#./}" "$target" "$execs" "$result"
  if [ "$result" != ok ]; then
    failed=$((failed + 1))
    sed -n '/--- FAIL/,$p' "$work/$i.log" | head -40
  fi
done < <(awk '{ print $1, $2, NR }' "$work/targets")
printf 'total executions: %d, targets that crashed or did not run: %d\n' "$total" "$failed"
[ "$failed" -eq 0 ]
