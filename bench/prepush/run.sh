#!/usr/bin/env bash
# Benchmark of ctxpack's pre-push hook (issue 6, item 5).
#
# For each size (default 10,000 and 100,000 files) it generates a repository
# (git fast-import: one commit of N small source files in dirs of 100), clones
# it as a bare "origin", installs the hook, and then, after one warm-up run,
# RUNS times:
#   commit a change of 3 files (2 modified, 1 added), then measure
#     hook    ctxpack hook pre-push, fed the line git would give it (cold: the
#             new content was never scanned)
#     gitleaks  gitleaks git --log-opts=<remote>..<head> on the same range
#     push    git push with the hook installed (end to end, moves origin)
# and prints the medians, the 100k/10k ratio of the hook (target <= 1.5) and
# the hook/gitleaks ratio.
#
# Usage: bench/prepush/run.sh [N ...]      (from the repository root)
# Env:   RUNS (default 5), KEEP=1 keeps the work directory.
set -euo pipefail

RUNS=${RUNS:-5}
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000 100000)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ctxpack-bench.XXXXXX")
if [ "${KEEP:-}" != 1 ]; then trap 'rm -rf "$WORK"' EXIT; else echo "work dir: $WORK"; fi

# Keep Go's caches where they are; give git an empty home (no user config).
export GOCACHE GOMODCACHE GOPATH
GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE) GOPATH=$(go env GOPATH)
export GIT_CONFIG_NOSYSTEM=1 HOME="$WORK/home"
mkdir -p "$HOME"
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.com

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print int((a[NR/2]+a[NR/2+1])/2)}'; }
step() { # step LABEL CMD...: run, print how long it took
	local t0 t1; t0=$(now_ms); "${@:2}"; t1=$(now_ms)
	printf '  %-44s %7d ms\n' "$1" $((t1 - t0)) >&2
}

echo "== tools" >&2
mkdir -p "$WORK/bin"
step "go build ctxpack" bash -c "cd '$ROOT' && go build -o '$WORK/bin/ctxpack' ./cmd/ctxpack"
step "go install gitleaks v8.30.1" env GOBIN="$WORK/bin" GOFLAGS=-mod=mod go install github.com/zricethezav/gitleaks/v8@v8.30.1
CTXPACK="$WORK/bin/ctxpack"
GITLEAKS="$WORK/bin/gitleaks"
"$GITLEAKS" version >&2

# fpath I: the path of generated file I.
fpath() { printf 'd%d/s%02d/f%d.go' $(($1 / 10000)) $(($1 / 100 % 100)) "$1"; }

# gen N: a fast-import stream of N files d<k>/s<j>/f<i>.go (100 per dir, 100
# dirs per top dir) plus a few top-level files, in one commit.
gen() {
	awk -v n="$1" 'BEGIN {
		ORS = ""
		for (i = 0; i < n; i++) {
			c = sprintf("package s%d\n\n// F%d is generated file %d.\nfunc F%d() int { return %d }\n", int(i/100), i, i, i, i * 7919 % 100003)
			printf "blob\nmark :%d\ndata %d\n%s\n", i + 1, length(c), c
		}
		split("README.md|go.mod|.gitignore", names, "|")
		top[1] = "# generated\n\nA generated repository.\n"; top[2] = "module example.com/gen\n\ngo 1.22\n"; top[3] = "*.log\n"
		for (k = 1; k <= 3; k++) printf "blob\nmark :%d\ndata %d\n%s\n", n + k, length(top[k]), top[k]
		msg = "generated\n"
		printf "commit refs/heads/main\nmark :%d\nauthor Bench <bench@example.com> 1700000000 +0000\ncommitter Bench <bench@example.com> 1700000000 +0000\ndata %d\n%s", n + 10, length(msg), msg
		for (i = 0; i < n; i++) printf "M 100644 :%d d%d/s%02d/f%d.go\n", i + 1, int(i / 10000), int(i / 100) % 100, i
		for (k = 1; k <= 3; k++) printf "M 100644 :%d %s\n", n + k, names[k]
		printf "\n"
	}'
}

declare -A HOOK GITLEAKS_MS PUSH
for n in "${SIZES[@]}"; do
	echo "== $n files" >&2
	d="$WORK/r$n"
	git init -q -b main "$d"
	step "generate (fast-import)" bash -c "cd '$d' && $(declare -f gen); gen $n | git fast-import --quiet"
	step "check out the work tree" git -C "$d" reset -q --hard main
	step "sync (flush the checkout before timing)" sync
	step "bare clone as origin" git clone -q --bare "$d" "$d.remote.git"
	git -C "$d" remote add origin "$d.remote.git"
	git -C "$d" fetch -q origin
	git -C "$d" branch -q -u origin/main main
	step "ctxpack hook install" "$CTXPACK" hook install -C "$d" >/dev/null
	url="$d.remote.git"
	hs=() gs=() ps=()
	# Run 0 is a warm-up (first reads of the pack and the binary); not counted.
	for run in $(seq 0 "$RUNS"); do
		i=$((run * 3))
		printf '\n// change %d of run %d\nfunc G%d() string { return "v%d" }\n' "$i" "$run" "$i" "$run" >>"$d/$(fpath "$i")"
		printf '\n// change %d of run %d\n' "$i" "$run" >>"$d/$(fpath $((n - 1 - i)))"
		printf 'package s0\n\n// New%d was added by run %d.\nfunc New%d() int { return %d }\n' "$run" "$run" "$run" "$run" >"$d/d0/s00/new$run.go"
		git -C "$d" add -A
		git -C "$d" commit -q -m "bench change $run"
		head=$(git -C "$d" rev-parse HEAD)
		old=$(git -C "$d" rev-parse origin/main)
		[ "$(git -C "$d" diff --name-only "$old" "$head" | wc -l)" -eq 3 ] || { echo "expected 3 changed files" >&2; exit 1; }

		t0=$(now_ms)
		printf 'refs/heads/main %s refs/heads/main %s\n' "$head" "$old" | (cd "$d" && "$CTXPACK" hook pre-push --no-notes origin "$url" 2>"$WORK/hook.log") || { cat "$WORK/hook.log" >&2; exit 1; }
		t1=$(now_ms); hs+=($((t1 - t0)))

		t0=$(now_ms)
		"$GITLEAKS" git --no-banner --log-level error --log-opts="$old..$head" "$d" >"$WORK/gitleaks.log" 2>&1 || { cat "$WORK/gitleaks.log" >&2; exit 1; }
		t1=$(now_ms); gs+=($((t1 - t0)))

		t0=$(now_ms)
		git -C "$d" push -q origin main 2>"$WORK/push.log" || { cat "$WORK/push.log" >&2; exit 1; }
		t1=$(now_ms); ps+=($((t1 - t0)))
		printf '  run %d: hook %5d ms   gitleaks %5d ms   git push (with hook) %5d ms%s\n' "$run" "${hs[-1]}" "${gs[-1]}" "${ps[-1]}" \
			"$([ "$run" -eq 0 ] && echo '   (warm-up)')" >&2
		if [ "$run" -eq 0 ]; then hs=() gs=() ps=(); fi
	done
	HOOK[$n]=$(printf '%s\n' "${hs[@]}" | median)
	GITLEAKS_MS[$n]=$(printf '%s\n' "${gs[@]}" | median)
	PUSH[$n]=$(printf '%s\n' "${ps[@]}" | median)
	grep -m1 'refs/heads/main' "$WORK/hook.log" >&2 || true
done

echo
printf '%-10s %12s %14s %18s %16s\n' files "hook (ms)" "gitleaks (ms)" "hook/gitleaks" "git push (ms)"
for n in "${SIZES[@]}"; do
	printf '%-10s %12d %14d %18s %16d\n' "$n" "${HOOK[$n]}" "${GITLEAKS_MS[$n]}" \
		"$(awk -v a="${HOOK[$n]}" -v b="${GITLEAKS_MS[$n]}" 'BEGIN { printf "%.2f", a / b }')" "${PUSH[$n]}"
done
if [ ${#SIZES[@]} -ge 2 ]; then
	first=${SIZES[0]} last=${SIZES[-1]}
	printf '\nhook time ratio %s/%s files: %s (target <= 1.5)\n' "$last" "$first" \
		"$(awk -v a="${HOOK[$last]}" -v b="${HOOK[$first]}" 'BEGIN { printf "%.2f", a / b }')"
	printf 'git push time ratio %s/%s files: %s\n' "$last" "$first" \
		"$(awk -v a="${PUSH[$last]}" -v b="${PUSH[$first]}" 'BEGIN { printf "%.2f", a / b }')"
fi
