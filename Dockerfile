# ctxpack GitHub Action image: `ctxpack action` on a small Debian with git.
# Build: docker build --build-arg VERSION=$(git describe --tags --always) -t ctxpack .
# Releases publish it for linux/amd64 and linux/arm64 to ghcr.io
# (.github/workflows/release.yml).

# The builder runs on the build machine's platform and cross-compiles for
# the target's (docker buildx --platform linux/amd64,linux/arm64 builds both
# without emulating Go); a plain `docker build .` builds for the machine.
FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-action
ARG TARGETOS
ARG TARGETARCH
RUN GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/ctxpack ./cmd/ctxpack

FROM debian:bookworm-slim
# git for debugging inside the job and for tools that shell out to it;
# ca-certificates for the GitHub API and artifact storage over HTTPS.
# Not version-pinned: bookworm's security updates replace the versions.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && git config --system --add safe.directory '*' \
 && groupadd --gid 1001 ctxpack \
 && useradd --uid 1001 --gid 1001 --create-home --shell /usr/sbin/nologin ctxpack
COPY --from=build /out/ctxpack /usr/local/bin/ctxpack
# uid 1001 is the runner user of GitHub-hosted runners, which owns the
# mounted workspace and file-command files.
USER 1001:1001
ENTRYPOINT ["ctxpack", "action"]
