#!/usr/bin/env bash
# Benchmark of ranges and pushes on a real repository with long history
# (issue 18: "ranges cost what the change costs").
#
# It clones REPO (a path or URL; nothing is committed here), takes the N most
# recent merge commits as pull requests (base = first parent, head = second
# parent), and times, alternating, RUNS times each after a warm-up:
#   ctxpack pack --base B --head H    as it chooses (auto), and forced to the
#                                     go-git and the git CLI backends
#                                     (CTXPACK_GIT_BACKEND)
#   gitleaks git --log-opts=B..H      on the same range
# then a pre-push of one new commit (3 changed files) on top of the default
# branch, as a new ref (checked against the tracking refs) and as an update.
# It prints the medians. BASELINE=/path/to/ctxpack adds that binary's rows
# (for a before/after comparison).
#
# Usage: bench/range/run.sh REPO [N]     (from the repository root)
# Env:   RUNS (default 5), KEEP=1 keeps the work directory, BASELINE.
set -euo pipefail

REPO=${1:?usage: bench/range/run.sh REPO [N]}
N=${2:-3}
RUNS=${RUNS:-5}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ctxpack-range.XXXXXX")
if [ "${KEEP:-}" != 1 ]; then trap 'rm -rf "$WORK"' EXIT; else echo "work dir: $WORK" >&2; fi

export GOCACHE GOMODCACHE GOPATH
GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE) GOPATH=$(go env GOPATH)
export GIT_CONFIG_NOSYSTEM=1 HOME="$WORK/home"
mkdir -p "$HOME"
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.com

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print int((a[NR/2]+a[NR/2+1])/2)}'; }

mkdir -p "$WORK/bin"
(cd "$ROOT" && go build -o "$WORK/bin/ctxpack" ./cmd/ctxpack)
GOBIN="$WORK/bin" GOFLAGS=-mod=mod go install github.com/zricethezav/gitleaks/v8@v8.30.1
CTXPACK="$WORK/bin/ctxpack"
GITLEAKS="$WORK/bin/gitleaks"

# No checkout: only objects are read (and a mirror may lack some large blobs).
d="$WORK/repo"
git clone -q --no-checkout "$REPO" "$d"
echo "$(git -C "$d" rev-list --count HEAD) commits on $(git -C "$d" symbolic-ref --short HEAD)" >&2

declare -a TOOLS=(auto go-git git gitleaks)
[ -n "${BASELINE:-}" ] && TOOLS+=(baseline)
run_tool() { # run_tool TOOL BASE HEAD
	case $1 in
	auto | go-git | git) CTXPACK_GIT_BACKEND=${1/auto/} "$CTXPACK" pack -C "$d" --base "$2" --head "$3" -o "$WORK/pack-$1.json" ;;
	baseline) "$BASELINE" pack -C "$d" --base "$2" --head "$3" -o "$WORK/pack-baseline.json" ;;
	gitleaks) "$GITLEAKS" git --no-banner --log-level error --log-opts="$2..$3" "$d" >/dev/null || [ $? -eq 1 ] ;;
	esac
}
time_ms() { local t0 t1; t0=$(now_ms); "$@" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }; t1=$(now_ms); echo $((t1 - t0)); }

printf '\n== pull-request ranges (median ms of %d runs)\n' "$RUNS"
printf '%-24s %6s %6s' "merge (base..head)" files commits
for tool in "${TOOLS[@]}"; do printf ' %10s' "$tool"; done
echo
git -C "$d" log --merges --first-parent --format='%h %p' -n "$N" | while read -r m p1 p2; do
	files=$(git -C "$d" diff --name-only "$(git -C "$d" merge-base "$p1" "$p2")" "$p2" | wc -l)
	commits=$(git -C "$d" rev-list --count "$p1..$p2")
	declare -A T=()
	for run in $(seq 0 "$RUNS"); do
		for tool in "${TOOLS[@]}"; do
			ms=$(time_ms run_tool "$tool" "$p1" "$p2")
			[ "$run" -gt 0 ] && T[$tool]+="$ms "
		done
	done
	printf '%-24s %6d %6d' "$m" "$files" "$commits"
	for tool in "${TOOLS[@]}"; do printf ' %10d' "$(printf '%s\n' ${T[$tool]} | median)"; done
	echo
	if [ -n "${BASELINE:-}" ]; then cmp -s "$WORK/pack-baseline.json" "$WORK/pack-go-git.json" || echo "  (baseline pack differs)"; fi
	for tool in auto git; do
		cmp -s "$WORK/pack-$tool.json" "$WORK/pack-go-git.json" || { echo "the $tool and go-git packs differ" >&2; exit 1; }
	done
done

# A pre-push of one new commit (two edits, one new file) on the default
# branch, made without a checkout (commit-tree over a temporary index).
tip=$(git -C "$d" rev-parse HEAD)
branch=$(git -C "$d" symbolic-ref --short HEAD)
idx="$WORK/index"
GIT_INDEX_FILE=$idx git -C "$d" read-tree "$tip"
for p in $(git -C "$d" ls-tree -r --name-only "$tip" | grep -E '\.(go|md|py|js|ts|rs|java)$' | head -2) bench/new.go; do
	blob=$( (git -C "$d" cat-file blob "$tip:$p" 2>/dev/null || true; printf '\n// bench change\n') | git -C "$d" hash-object -w --stdin)
	GIT_INDEX_FILE=$idx git -C "$d" update-index --add --cacheinfo "100644,$blob,$p"
done
tree=$(GIT_INDEX_FILE=$idx git -C "$d" write-tree --missing-ok)
head=$(git -C "$d" commit-tree "$tree" -p "$tip" -m "bench change")
git -C "$d" update-ref refs/heads/bench "$head"
zero=$(printf '%040d' 0)
printf '\n== pre-push of 1 commit, 3 files (median ms of %d runs)\n' "$RUNS"
printf '%-24s' push
for tool in auto go-git git ${BASELINE:+baseline}; do printf ' %10s' "$tool"; done
echo
hook() { # hook TOOL LINE
	local bin=$CTXPACK
	[ "$1" = baseline ] && bin=$BASELINE
	local be=${1/baseline/}
	printf '%s\n' "$2" | (cd "$d" && CTXPACK_GIT_BACKEND=${be/auto/} "$bin" hook pre-push --no-notes origin "$REPO")
}
for kind in new-ref update; do
	line="refs/heads/bench $head refs/heads/bench $zero"
	[ $kind = update ] && line="refs/heads/$branch $head refs/heads/$branch $tip"
	declare -A T=()
	for run in $(seq 0 "$RUNS"); do
		for tool in auto go-git git ${BASELINE:+baseline}; do
			ms=$(time_ms hook "$tool" "$line")
			[ "$run" -gt 0 ] && T[$tool]+="$ms "
		done
	done
	printf '%-24s' "$kind"
	for tool in auto go-git git ${BASELINE:+baseline}; do printf ' %10d' "$(printf '%s\n' ${T[$tool]} | median)"; done
	echo
done
