#!/usr/bin/env bash
# Rehearses the Action's image offline: builds the repository's Dockerfile,
# unchanged, with buildah (no Docker engine needed) and checks the image.
#
# The base images are LOCAL STAND-INS, not the registry's: a machine that
# cannot pull golang:1.26-bookworm and debian:bookworm-slim gets
#   - debian:bookworm-slim: a minimal Debian bookworm (debootstrap
#     --variant=minbase) with this machine's Debian apt sources;
#   - golang:1.26-bookworm: that rootfs plus git, ca-certificates and this
#     machine's Go toolchain (it must be go1.26.x) in /usr/local/go, with
#     GOPATH=/go and PATH as in the official image. This machine's local CA
#     certificates (/usr/local/share/ca-certificates) are added, so the
#     builder reaches the Go module proxy the way this machine does.
# They are tagged with the registry's names in a storage of their own, so the
# Dockerfile's FROM lines resolve to them (--pull=never).
#
# What it checks, for the build machine's platform (a plain build, no
# --platform, as `docker build .`):
#   - the image's platform, user (1001:1001) and entrypoint (ctxpack action);
#   - /usr/local/bin/ctxpack is a static binary of the platform (file);
#   - in the image, as its user: `id -u` is 1001, git runs, `ctxpack
#     --version` prints the build argument VERSION, and `ctxpack action`
#     without a GitHub event exits non-zero naming GITHUB_EVENT_PATH.
# For linux/arm64 (on an amd64 machine) it builds the Dockerfile's builder
# stage with --platform linux/arm64 --target build: the stage runs on the
# build machine's platform and cross-compiles, and /out/ctxpack must be a
# static arm64 binary (file) that prints VERSION (run under qemu-user, so
# binfmt_misc must know aarch64). The arm64 image itself is not assembled:
# buildah 1.28 (Debian bookworm's, the newest this kind of machine can
# install) carries the builder stage's `FROM --platform` over to the next
# FROM, so it looks for an amd64 debian:bookworm-slim and fails with "image
# not known"; docker buildx, which the release workflow uses, does not.
#
# Needs root, buildah, debootstrap, file and go (apt-get install buildah
# debootstrap file; for arm64 also qemu-user-static, binfmt_misc mounted,
# update-binfmts --enable qemu-aarch64). Not run by CI. The stand-ins and
# buildah's storage are kept in $CTXPACK_DOCKER_REHEARSAL (default
# ~/.cache/ctxpack-docker-rehearsal); REBUILD=1 makes the stand-ins again;
# ARM64=0 skips the arm64 build; STORAGE_DRIVER=vfs where overlay mounts are
# refused.
#
#   scripts/docker-rehearsal.sh
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${CTXPACK_DOCKER_REHEARSAL:-${XDG_CACHE_HOME:-$HOME/.cache}/ctxpack-docker-rehearsal}
SUITE=bookworm
GO_SERIES=1.26
DEBIAN_IMAGE=docker.io/library/debian:bookworm-slim
GOLANG_IMAGE=docker.io/library/golang:$GO_SERIES-bookworm
VERSION=$(git describe --tags --always)

fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "run as root (debootstrap, buildah's chroot isolation)"
for cmd in buildah debootstrap file go git; do
  command -v "$cmd" >/dev/null || fail "$cmd is not installed (apt-get install buildah debootstrap file)"
done
goversion=$(go env GOVERSION)
case "$goversion" in
  "go$GO_SERIES"|"go$GO_SERIES".*) ;;
  *) fail "the golang:$GO_SERIES stand-in needs this machine's go to be go$GO_SERIES.x, not $goversion" ;;
esac
hostarch=$(dpkg --print-architecture)

mkdir -p "$CACHE"
bah() { buildah --root "$CACHE/storage" --runroot "$CACHE/run" --storage-driver "${STORAGE_DRIVER:-overlay}" "$@"; }
ctrs=()
# Working containers go; so do images left untagged by an earlier run.
cleanup() {
  for c in "${ctrs[@]}"; do bah rm "$c" >/dev/null 2>&1 || true; done
  bah rmi --prune >/dev/null 2>&1 || true
}
trap cleanup EXIT

# debian_standin ARCH: the tag localhost/standin-debian:bookworm-slim-ARCH,
# a minbase debootstrap of $SUITE for ARCH.
debian_standin() {
  local arch=$1 tag="localhost/standin-debian:$SUITE-slim-$1" rootfs="$CACHE/rootfs-$1"
  if [ -z "${REBUILD:-}" ] && bah inspect --type image "$tag" >/dev/null 2>&1; then return; fi
  echo "-- stand-in $tag: debootstrap --variant=minbase --arch=$arch $SUITE (takes minutes)"
  rm -rf "$rootfs"
  debootstrap --variant=minbase --arch="$arch" "$SUITE" "$rootfs" >"$CACHE/debootstrap-$arch.log" 2>&1 ||
    { tail -n 20 "$CACHE/debootstrap-$arch.log" >&2; fail "debootstrap $arch (log above)"; }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    # The official image's sources (release, updates, security) are this
    # Debian machine's own.
    rm -f "$rootfs/etc/apt/sources.list"
    cp /etc/apt/sources.list.d/debian.sources "$rootfs/etc/apt/sources.list.d/"
  fi
  local c mnt
  c=$(bah from --arch "$arch" scratch); ctrs+=("$c")
  mnt=$(bah mount "$c")
  cp -a "$rootfs/." "$mnt/"
  bah umount "$c" >/dev/null
  bah config --os linux --arch "$arch" --cmd bash \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c"
  bah commit -q "$c" "$tag" >/dev/null
  rm -rf "$rootfs"
}

# golang_standin: $GOLANG_IMAGE from the build machine's Debian stand-in.
golang_standin() {
  if [ -z "${REBUILD:-}" ] && bah inspect --type image "$GOLANG_IMAGE" >/dev/null 2>&1 &&
     [ "$(bah inspect --type image --format '{{range .OCIv1.Config.Env}}{{println .}}{{end}}' "$GOLANG_IMAGE" | sed -n 's/^GOLANG_VERSION=//p')" = "${goversion#go}" ]; then
    return
  fi
  echo "-- stand-in $GOLANG_IMAGE: the $hostarch Debian stand-in + git, ca-certificates, $goversion"
  local c
  c=$(bah from --pull=never "localhost/standin-debian:$SUITE-slim-$hostarch"); ctrs+=("$c")
  bah run --isolation chroot "$c" -- sh -c 'apt-get update -q &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ca-certificates git netbase &&
    rm -rf /var/lib/apt/lists/* && mkdir -p /go/src /go/bin && chmod -R 1777 /go' >"$CACHE/golang-standin.log" 2>&1 ||
    { tail -n 20 "$CACHE/golang-standin.log" >&2; fail "installing git and ca-certificates in the golang stand-in (log above)"; }
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    bah copy -q "$c" /usr/local/share/ca-certificates/ /usr/local/share/ca-certificates/ >/dev/null
    bah run --isolation chroot "$c" -- update-ca-certificates >/dev/null 2>&1
  fi
  bah copy -q "$c" "$(go env GOROOT)" /usr/local/go >/dev/null
  bah config --env GOLANG_VERSION="${goversion#go}" --env GOTOOLCHAIN=local --env GOPATH=/go \
    --env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --workingdir /go "$c"
  bah commit -q "$c" "$GOLANG_IMAGE" >/dev/null
}

# run_in CONTAINER COMMAND...: runs COMMAND in the container as the image's
# user and sets RUN_RC and RUN_OUT (stdout and stderr). The output goes
# through a file in a bind mount: buildah 1.28's chroot isolation now and
# then loses the output of a command that exits at once (1 run in 6 here).
run_in() {
  local c=$1 d; shift
  d=$(mktemp -d "${TMPDIR:-/tmp}/ctxpack-docker-rehearsal.XXXXXX")
  chmod 0777 "$d"
  # shellcheck disable=SC2016 # $@ and $? are the container shell's
  bah run --isolation chroot --volume "$d:/rehearsal" "$c" -- \
    sh -c '"$@" >/rehearsal/out 2>&1; echo $? >/rehearsal/rc' sh "$@" >"$d/buildah.log" 2>&1 || true
  if [ ! -s "$d/rc" ]; then
    cat "$d/buildah.log" >&2; rm -rf "$d"
    fail "could not run '$*' in the image (buildah run, log above)"
  fi
  RUN_RC=$(cat "$d/rc"); RUN_OUT=$(cat "$d/out")
  rm -rf "$d"
}

# build_and_check ARCH [BUD ARGS...]: builds the Dockerfile with the Debian
# stand-in of ARCH as debian:bookworm-slim and checks the image.
build_and_check() {
  local arch=$1; shift
  local image="localhost/ctxpack-action:rehearsal-$arch" log="$CACHE/build-$arch.log"
  bah tag "localhost/standin-debian:$SUITE-slim-$arch" "$DEBIAN_IMAGE"
  echo
  echo "== buildah bud${*:+ $*} --build-arg VERSION=$VERSION (Dockerfile unchanged)"
  if ! bah bud --isolation chroot --pull=never "$@" --build-arg VERSION="$VERSION" \
      -t "$image" -f Dockerfile . >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    fail "buildah bud $* (log above, all of it in $log)"
  fi
  local c mnt got
  got=$(bah inspect --type image --format '{{.OCIv1.OS}}/{{.OCIv1.Architecture}} user={{.OCIv1.Config.User}} entrypoint={{.OCIv1.Config.Entrypoint}}' "$image")
  [ "$got" = "linux/$arch user=1001:1001 entrypoint=[ctxpack action]" ] || fail "image config: $got"
  echo "image $image: $got, $(bah images --format '{{.Size}}' "$image")"

  c=$(bah from --pull=never "$image"); ctrs+=("$c")
  mnt=$(bah mount "$c")
  got=$(file -b "$mnt/usr/local/bin/ctxpack")
  case "$arch" in
    amd64) echo "$got" | grep -Eq 'ELF 64-bit.*x86-64.*statically linked' ;;
    arm64) echo "$got" | grep -Eq 'ELF 64-bit.*ARM aarch64.*statically linked' ;;
  esac || fail "/usr/local/bin/ctxpack is not a static linux/$arch binary: $got"
  echo "/usr/local/bin/ctxpack: $(echo "$got" | cut -d, -f1-2), $(stat -c %s "$mnt/usr/local/bin/ctxpack") bytes"
  bah umount "$c" >/dev/null

  # Run as the image's user (buildah run takes it from the image).
  run_in "$c" id -u
  [ "$RUN_RC/$RUN_OUT" = 0/1001 ] || fail "id -u in the image: exit $RUN_RC, '$RUN_OUT', want 1001"
  run_in "$c" git --version
  [ "$RUN_RC" = 0 ] || fail "git --version in the image: exit $RUN_RC: $RUN_OUT"
  echo "as uid 1001: $RUN_OUT"
  run_in "$c" ctxpack --version
  [ "$RUN_RC/$RUN_OUT" = "0/ctxpack version $VERSION" ] ||
    fail "ctxpack --version in the image: exit $RUN_RC, '$RUN_OUT', want 'ctxpack version $VERSION'"
  echo "as uid 1001: $RUN_OUT"
  run_in "$c" ctxpack action
  [ "$RUN_RC" != 0 ] || fail "ctxpack action without an event exited 0: $RUN_OUT"
  echo "$RUN_OUT" | grep -q GITHUB_EVENT_PATH ||
    fail "ctxpack action without an event (exit $RUN_RC) does not name GITHUB_EVENT_PATH: $RUN_OUT"
  echo "as uid 1001, no event: ctxpack action exits $RUN_RC: $(echo "$RUN_OUT" | grep -m1 GITHUB_EVENT_PATH)"
}

# cross_compile_check ARCH: the Dockerfile's builder stage for linux/ARCH.
cross_compile_check() {
  local arch=$1 image="localhost/ctxpack-build:rehearsal-$1" log="$CACHE/build-$1.log"
  echo
  # buildah 1.28 leaves $BUILDPLATFORM unexpanded in `FROM --platform=` unless
  # it is given as a build argument; docker buildx sets it itself.
  echo "== buildah bud --platform linux/$arch --target build --build-arg BUILDPLATFORM=linux/$hostarch --build-arg VERSION=$VERSION (Dockerfile unchanged)"
  if ! bah bud --isolation chroot --pull=never --platform "linux/$arch" --target build \
      --build-arg BUILDPLATFORM="linux/$hostarch" --build-arg VERSION="$VERSION" \
      -t "$image" -f Dockerfile . >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    fail "buildah bud --platform linux/$arch --target build (log above, all of it in $log)"
  fi
  local c mnt got gofile
  # buildah labels the stage's image with the target platform; what ran is
  # told by the stage's own go binary.
  c=$(bah from --pull=never "$image" 2>/dev/null); ctrs+=("$c")
  mnt=$(bah mount "$c")
  gofile=$(file -b "$mnt/usr/local/go/bin/go")
  [ "$(file -b "$mnt/usr/local/go/bin/go" | cut -d, -f2)" = "$(file -b "$(go env GOROOT)/bin/go" | cut -d, -f2)" ] ||
    fail "the builder stage's go is not of the build platform linux/$hostarch: $gofile"
  got=$(file -b "$mnt/out/ctxpack")
  echo "$got" | grep -Eq 'ELF 64-bit.*ARM aarch64.*statically linked' ||
    fail "/out/ctxpack of the builder stage is not a static linux/$arch binary: $got"
  echo "builder stage's go:$(echo "$gofile" | cut -d, -f2) (the build platform); /out/ctxpack: $(echo "$got" | cut -d, -f1-2), $(stat -c %s "$mnt/out/ctxpack") bytes"
  bah umount "$c" >/dev/null
  run_in "$c" /out/ctxpack --version
  [ "$RUN_RC/$RUN_OUT" = "0/ctxpack version $VERSION" ] ||
    fail "/out/ctxpack --version (under qemu): exit $RUN_RC, '$RUN_OUT', want 'ctxpack version $VERSION'"
  echo "under qemu-aarch64: $RUN_OUT"
}

echo "docker rehearsal of $(git rev-parse --short HEAD) (the work tree as it is), version $VERSION"
echo "base images: local stand-ins built with debootstrap, not the registry's"
debian_standin "$hostarch"
golang_standin
build_and_check "$hostarch"

if [ "${ARM64:-1}" = 0 ]; then
  echo; echo "arm64: skipped (ARM64=0)"
elif [ "$hostarch" = arm64 ]; then
  echo; echo "arm64: built above (this machine is arm64)"
else
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] ||
    fail "this machine cannot run arm64 binaries (no qemu-aarch64 in /proc/sys/fs/binfmt_misc: apt-get install qemu-user-static, mount binfmt_misc, update-binfmts --enable qemu-aarch64), or run with ARM64=0"
  cross_compile_check arm64
fi
echo
echo "docker rehearsal passed"
