#!/usr/bin/env bash
# Fails when total line coverage drops below .github/coverage-baseline.json's
# line_coverage_percent (which must satisfy 0 < x <= 100). Usage:
#   scripts/check_coverage_baseline.sh [cover.out]
# Without an argument it runs the tests to produce the profile.
set -euo pipefail
cd "$(dirname "$0")/.."
baseline_file=.github/coverage-baseline.json
profile=${1:-}
if [ -z "$profile" ]; then
  profile=$(mktemp); trap 'rm -f "$profile"' EXIT
  go test -count=1 -coverprofile="$profile" -coverpkg=./... ./... >/dev/null
fi
baseline=$(sed -n 's/.*"line_coverage_percent"[[:space:]]*:[[:space:]]*\([0-9.eE+-]*\).*/\1/p' "$baseline_file")
if [ -z "$baseline" ]; then
  echo "$baseline_file: no numeric line_coverage_percent"; exit 1
fi
if ! awk -v b="$baseline" 'BEGIN { exit !(b > 0 && b <= 100) }'; then
  echo "$baseline_file: line_coverage_percent $baseline must satisfy 0 < x <= 100"; exit 1
fi
total=$(go tool cover -func="$profile" | awk '/^total:/ { sub("%", "", $3); print $3 }')
echo "line coverage ${total}% (baseline ${baseline}%)"
if awk -v t="$total" -v b="$baseline" 'BEGIN { exit !(t < b) }'; then
  echo "coverage ${total}% is below the baseline ${baseline}%: add tests, or lower the baseline in $baseline_file with a reason in the commit"; exit 1
fi
