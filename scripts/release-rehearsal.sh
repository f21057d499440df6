#!/usr/bin/env bash
# Rehearses a release on this machine, offline from GitHub: goreleaser
# builds a snapshot of the committed HEAD (.goreleaser.yaml: binaries for
# linux, darwin, windows × amd64, arm64, archives, checksums.txt, an SPDX
# SBOM per archive made by syft) twice, and the script checks what a
# release would publish:
#
#   - exactly the six archives, each holding the binary for its platform
#     (`file`) and the README, action.yml and .pre-commit-hooks.yaml;
#   - checksums.txt lists every archive and SBOM and `sha256sum -c` passes;
#   - every SBOM decodes as SPDX 2.3 JSON (syft convert), describes its
#     archive by name and SHA-256 and lists the module github.com/ctxpack/ctxpack;
#   - the binary for this machine's platform prints the snapshot version;
#   - the second build, from another clone at another path with an empty Go
#     build cache, gives the same bytes for every binary and every archive.
#
# Publishing, the image and provenance attestations need GitHub and are not
# rehearsed (goreleaser's snapshot mode skips them). Not run by CI: it
# builds everything twice, the second time without a build cache (about
# 10 minutes of CPU). Needs go, git, jq, file, sha256sum, unzip.
#
#   scripts/release-rehearsal.sh            # work in a temporary directory, removed after
#   KEEP=1 scripts/release-rehearsal.sh     # keep it (dist/ of both builds) and print where
#
# goreleaser and syft are installed once per version into $CTXPACK_TOOLS
# (default ~/.cache/ctxpack-ci/tools, shared with .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

GORELEASER_VERSION=$(sed -n 's/^GORELEASER_VERSION=//p' .ci/run)
SYFT_VERSION=v1.57.0
TOOLS=${CTXPACK_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/ctxpack-ci/tools}
[ -n "$GORELEASER_VERSION" ] || { echo "release-rehearsal: no GORELEASER_VERSION in .ci/run" >&2; exit 1; }
for cmd in go git jq file sha256sum unzip; do
  command -v "$cmd" >/dev/null || { echo "release-rehearsal: $cmd is not installed" >&2; exit 1; }
done

# tool NAME MODULE/PATH VERSION [LDFLAGS]: prints the path of the installed
# binary, installing it first when this version is not there yet.
tool() {
  local bin="$TOOLS/$1-$3"
  if [ ! -x "$bin" ]; then
    mkdir -p "$TOOLS"
    local gobin; gobin=$(mktemp -d)
    GOBIN="$gobin" go install -ldflags "${4:-}" "$2@$3" >&2
    mv "$gobin/$1" "$bin"; rm -rf "$gobin"
  fi
  printf '%s\n' "$bin"
}

goreleaser=$(tool goreleaser github.com/goreleaser/goreleaser/v2 "$GORELEASER_VERSION")
# syft's releases stamp its version, which the SBOMs name as their creator.
syft=$(tool syft github.com/anchore/syft/cmd/syft "$SYFT_VERSION" "-X main.version=${SYFT_VERSION#v}")

work=$(mktemp -d "${TMPDIR:-/tmp}/ctxpack-release-rehearsal.XXXXXX")
if [ -n "${KEEP:-}" ]; then
  trap 'echo "kept: $work"' EXIT
else
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/bin"
ln -s "$syft" "$work/bin/syft"

commit=$(git rev-parse HEAD)
echo "rehearsing commit $commit (uncommitted changes are not part of it)"
echo "goreleaser $GORELEASER_VERSION, syft $SYFT_VERSION, $(go version)"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "note: the work tree has uncommitted changes; they are left out"
fi

fail() { echo "FAIL: $*" >&2; exit 1; }

# build NAME [GOCACHE]: clones the commit into $work/NAME and runs the
# snapshot release there. The clone has an origin remote, as a release
# checkout does; without one goreleaser's snapshot mode replaces the git
# facts with made-up ones (the commit date becomes the build's time).
build() {
  local dir="$work/$1/ctxpack" log="$work/$1.log"
  git clone -q --no-local "$repo" "$dir"
  git -C "$dir" checkout -q --detach "$commit"
  echo
  echo "== build $1 in $dir${2:+ (empty build cache $2)}"
  # -buildvcs=true as in a release checkout: the binary records the commit.
  if ! (cd "$dir" && env PATH="$work/bin:$PATH" GOFLAGS=-buildvcs=true ${2:+GOCACHE="$2"} \
      "$goreleaser" release --snapshot --clean >"$log" 2>&1); then
    tail -n 40 "$log" >&2
    fail "goreleaser release --snapshot failed (log above)"
  fi
  grep -E 'release succeeded' "$log" || true
}

# verify DIST: the checks of one build's dist/.
verify() {
  local dist=$1 version
  version=$(jq -r .version "$dist/metadata.json")
  if [ -z "$version" ] || [ "$version" = null ]; then fail "$dist/metadata.json has no version"; fi
  echo "snapshot version: $version"

  local expected=() os arch ext name
  for os in linux darwin windows; do
    for arch in amd64 arm64; do
      ext=tar.gz; [ "$os" = windows ] && ext=zip
      expected+=("ctxpack_${version}_${os}_${arch}.${ext}")
    done
  done
  local found
  found=$(cd "$dist" && find . -maxdepth 1 -type f \( -name '*.tar.gz' -o -name '*.zip' \) | sed 's|^\./||' | sort)
  [ "$found" = "$(printf '%s\n' "${expected[@]}" | sort)" ] ||
    fail "archives in $dist are not the six expected: $(echo "$found" | tr '\n' ' ')"
  echo "archives (6):"
  for name in "${expected[@]}"; do
    printf '  %-42s %10d bytes\n' "$name" "$(stat -c %s "$dist/$name")"
  done

  # Contents and platform of every archive's binary.
  local x="$work/extract" bin want contents
  for name in "${expected[@]}"; do
    os=$(echo "$name" | sed -E 's/.*_(linux|darwin|windows)_(amd64|arm64)\..*/\1/')
    arch=$(echo "$name" | sed -E 's/.*_(linux|darwin|windows)_(amd64|arm64)\..*/\2/')
    rm -rf "$x"; mkdir -p "$x"
    bin=ctxpack
    if [ "$os" = windows ]; then
      bin=ctxpack.exe
      unzip -q "$dist/$name" -d "$x"
    else
      tar -xzf "$dist/$name" -C "$x"
    fi
    contents=$(cd "$x" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')
    [ "$contents" = ".pre-commit-hooks.yaml README.md action.yml $bin " ] ||
      fail "$name holds: $contents"
    case "$os/$arch" in
      linux/amd64) want='ELF 64-bit.*x86-64.*statically linked' ;;
      linux/arm64) want='ELF 64-bit.*ARM aarch64.*statically linked' ;;
      darwin/amd64) want='Mach-O 64-bit.*x86_64' ;;
      darwin/arm64) want='Mach-O 64-bit.*arm64' ;;
      windows/amd64) want='PE32\+ executable.*x86-64' ;;
      windows/arm64) want='PE32\+ executable.*Aarch64' ;;
    esac
    file -b "$x/$bin" | grep -Eq "$want" || fail "$name: $bin is not $os/$arch: $(file -b "$x/$bin")"
  done
  echo "each archive holds .pre-commit-hooks.yaml, README.md, action.yml and the binary of its platform (file)"

  # Checksums: every archive and SBOM listed, all matching.
  local listed
  listed=$(awk '{print $2}' "$dist/checksums.txt" | sort)
  [ "$listed" = "$(for name in "${expected[@]}"; do echo "$name"; echo "$name.sbom.json"; done | sort)" ] ||
    fail "checksums.txt does not list exactly the archives and their SBOMs: $(echo "$listed" | tr '\n' ' ')"
  (cd "$dist" && sha256sum --quiet -c checksums.txt) || fail "sha256sum -c checksums.txt"
  echo "checksums.txt: $(wc -l <"$dist/checksums.txt") entries, sha256sum -c OK"

  # SBOMs: SPDX 2.3 JSON that syft decodes, about its archive, naming ctxpack.
  local sbom sum
  for name in "${expected[@]}"; do
    sbom="$dist/$name.sbom.json"
    [ -s "$sbom" ] || fail "no SBOM for $name"
    "$syft" convert "$sbom" -o "syft-json=$work/sbom-decoded.json" >/dev/null 2>"$work/sbom-decode.err" ||
      fail "$sbom does not decode as SPDX JSON: $(grep -v WARN "$work/sbom-decode.err")"
    sum=$(sha256sum "$dist/$name" | cut -d' ' -f1)
    jq -e --arg name "$name" --arg sum "$sum" '
      .spdxVersion == "SPDX-2.3" and .dataLicense == "CC0-1.0" and .SPDXID == "SPDXRef-DOCUMENT"
      and .name == $name and (.documentNamespace | length > 0)
      and ([.packages[] | select(.name == $name and (.checksums[]? | .algorithm == "SHA256" and .checksumValue == $sum))] | length == 1)
      and ([.relationships[] | select(.spdxElementId == "SPDXRef-DOCUMENT" and .relationshipType == "DESCRIBES")] | length >= 1)
      and ([.packages[] | select(.name == "github.com/ctxpack/ctxpack"
             and any(.externalRefs[]?; .referenceLocator | startswith("pkg:golang/github.com/ctxpack/ctxpack")))] | length == 1)
    ' "$sbom" >/dev/null || fail "$sbom: not SPDX-2.3 describing $name (sha256 $sum) with the module github.com/ctxpack/ctxpack"
  done
  echo "SBOMs (6): SPDX-2.3 JSON, decoded by syft convert, each describing its archive by name and sha256, listing github.com/ctxpack/ctxpack ($(jq -r '[.packages[] | select(.name == "github.com/ctxpack/ctxpack")][0].versionInfo' "$dist/${expected[0]}.sbom.json")) and $(jq '.packages | length' "$dist/${expected[0]}.sbom.json") packages in all; created by $(jq -r '.creationInfo.creators | join(", ")' "$dist/${expected[0]}.sbom.json")"

  # The binary of this machine's platform runs and knows its version.
  local hostos hostarch out
  hostos=$(go env GOHOSTOS); hostarch=$(go env GOHOSTARCH)
  bin=$(find "$dist" -maxdepth 1 -type d -name "ctxpack_${hostos}_${hostarch}*" | head -n 1)
  [ -n "$bin" ] || fail "no binary for this machine's platform $hostos/$hostarch in $dist"
  bin="$bin/ctxpack"; [ "$hostos" = windows ] && bin="$bin.exe"
  out=$("$bin" --version) || fail "$bin --version failed"
  [ "$out" = "ctxpack version $version" ] || fail "$bin --version printed '$out', want 'ctxpack version $version'"
  echo "$hostos/$hostarch binary: '$out'"
}

build a
verify "$work/a/ctxpack/dist"
build b "$work/gocache-b"
verify "$work/b/ctxpack/dist"

echo
echo "== reproducibility: build a (build cache of this machine) against build b (other path, empty build cache)"
sums() { (cd "$1" && sha256sum ctxpack_*/ctxpack* ./*.tar.gz ./*.zip | sed 's| \./| |'); }
sums "$work/a/ctxpack/dist" >"$work/a.sums"
sums "$work/b/ctxpack/dist" >"$work/b.sums"
if ! diff -u "$work/a.sums" "$work/b.sums"; then
  fail "the two builds differ (above)"
fi
sed 's/^/  /' "$work/a.sums"
echo "identical: $(wc -l <"$work/a.sums") files (6 binaries, 6 archives)"
echo
echo "release rehearsal passed"
