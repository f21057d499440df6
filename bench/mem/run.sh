#!/usr/bin/env bash
# Peak RSS and CPU time of full-tree packs made by ctxpack as built at one
# or more git revisions, run alternately, with the sha256 of every pack and
# record: a memory change shows its figures and that the bytes stayed the
# same. The task is bench/run's full-tree pack (`ctxpack pack --worktree
# --type full` with every limit raised, cold scan cache) on bench/run's
# public repositories (REAL_REPOS there, pinned by commit; cloned at run
# time into bench/.corpora/real-<name>, never committed).
#
#   bench/mem/run.sh [REV ...]       default: main HEAD
#
# Env: REAL="hugo prometheus"  only these repositories (default: all six)
#      MIRRORS=DIR             clone from DIR/<owner>+<name>/repo (bare
#                              mirrors) instead of https://github.com
#      RUNS=3                  runs per revision and repository
#
# Output: one line per run (revision, repository, peak RSS MB, CPU s as
# user+sys, pack and record sha256), then the medians per revision and
# repository, and whether every revision wrote the same pack and record.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
runs=${RUNS:-3}
revs=("$@")
[ ${#revs[@]} -gt 0 ] || revs=(main HEAD)
[ -x /usr/bin/time ] || { echo "bench/mem/run.sh: /usr/bin/time (GNU time) is needed for peak RSS" >&2; exit 1; }

# The repositories and pins of bench/run, read from it (one list).
mapfile -t entries < <(sed -n '/^REAL_REPOS=(/,/^)/{s/^  "\(.*\)"$/\1/p}' bench/run)
names=()
for e in "${entries[@]}"; do read -r n _ <<< "$e"; names+=("$n"); done
if [ -n "${REAL:-}" ]; then read -r -a names <<< "$REAL"; fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ctxpack-mem.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-buildvcs=false
for r in "${revs[@]}"; do
  id=$(git rev-parse --short "$r^{commit}")
  mkdir -p "$work/src-$id"
  git archive "$id" | tar -x -C "$work/src-$id"
  (cd "$work/src-$id" && go build -o "$work/ctxpack-$id" ./cmd/ctxpack)
done

export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
export GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
for n in "${names[@]}"; do
  entry=
  for e in "${entries[@]}"; do read -r name _ <<< "$e"; [ "$name" = "$n" ] && entry=$e; done
  [ -n "$entry" ] || { echo "REAL: no public repository named $n in bench/run" >&2; exit 2; }
  read -r _ repo pin _ <<< "$entry"
  d=$root/bench/.corpora/real-$n
  # The same work tree bench/run makes (it reuses this one and vice versa).
  if [ "$(git -C "$d" rev-parse -q --verify refs/bench/pin 2>/dev/null)" != "$pin" ] || [ -n "$(git -C "$d" status --porcelain 2>/dev/null)" ]; then
    rm -rf "$d"
    if [ -n "${MIRRORS:-}" ]; then src=$MIRRORS/${repo/\//+}/repo; else src=https://github.com/$repo.git; fi
    git clone -q --no-checkout "$src" "$d"
    git -C "$d" -c advice.detachedHead=false checkout -q "$pin" 2>/dev/null || true
    missing=$(git -C "$d" ls-files --deleted)
    if [ -n "$missing" ]; then
      echo "$n: left out of the work tree (blob missing from $src): $missing" >&2
      printf '%s\n' "$missing" | git -C "$d" rm -q --cached --pathspec-from-file=-
      git -C "$d" commit -q -m "bench: without the blobs the mirror lacks"
    fi
    git -C "$d" update-ref refs/bench/pin "$pin"
  fi
done

rows=$work/rows.tsv
: > "$rows"
for i in $(seq "$runs"); do
  for n in "${names[@]}"; do
    d=$root/bench/.corpora/real-$n
    for r in "${revs[@]}"; do
      id=$(git rev-parse --short "$r^{commit}")
      rm -rf "$(git -C "$d" rev-parse --path-format=absolute --git-common-dir)/ctxpack/scan-cache"
      out=$work/pack-$id-$n.json
      (cd "$d" && /usr/bin/time -f "%M %U %S" -o "$work/time" "$work/ctxpack-$id" pack --worktree --type full \
        --max-content-bytes 1000000000000 --max-files 1000000000 --max-file-bytes 1000000000 -o "$out" 2>/dev/null) ||
        { echo "ctxpack of $r failed on $n (run it by hand in $d to see why)" >&2; exit 1; }
      read -r kb u s < "$work/time"
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$n" "$(awk -v k="$kb" 'BEGIN { printf "%.1f", k / 1024 }')" \
        "$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')" \
        "$(sha256sum < "$out" | cut -c1-16)" "$(sha256sum < "$out.record.json" | cut -c1-16)" | tee -a "$rows"
    done
  done
done

echo
echo "medians (revision, repository, peak RSS MB, CPU s):"
for n in "${names[@]}"; do
  for r in "${revs[@]}"; do
    med() { awk -F'\t' -v r="$r" -v n="$n" -v c="$1" '$1 == r && $2 == n { print $c }' "$rows" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
    printf '%s\t%s\t%s\t%s\n' "$r" "$n" "$(med 3)" "$(med 4)"
  done
done
bad=0
for n in "${names[@]}"; do
  if [ "$(awk -F'\t' -v n="$n" '$2 == n { print $5, $6 }' "$rows" | sort -u | wc -l)" != 1 ]; then
    echo "$n: the revisions wrote different packs or records" >&2; bad=1
  fi
done
[ "$bad" = 0 ] && echo "every pack and record byte-identical across revisions and runs"
exit "$bad"
