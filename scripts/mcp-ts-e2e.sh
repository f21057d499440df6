#!/usr/bin/env bash
# End-to-end test of `ctxpack serve` with the official TypeScript MCP SDK's
# client (@modelcontextprotocol/sdk from npm), over stdio. Optional: it
# skips cleanly (exit 0) when node or npm is absent. It installs the SDK in
# a temporary directory, builds ctxpack, makes a fixture repository whose
# pack is stored as pr-1, and runs scripts/mcp-ts-e2e/client.mjs.
set -euo pipefail
cd "$(dirname "$0")/.."
SDK_VERSION=1.32.2

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "mcp-ts-e2e: skipped (node or npm not installed)"
  exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm init -y >/dev/null 2>&1 && npm install --silent --no-audit --no-fund "@modelcontextprotocol/sdk@$SDK_VERSION" >/dev/null 2>&1) || {
  echo "mcp-ts-e2e: npm install @modelcontextprotocol/sdk@$SDK_VERSION failed"; exit 1; }
cp scripts/mcp-ts-e2e/client.mjs "$tmp/"
go build -o "$tmp/ctxpack" ./cmd/ctxpack

repo="$tmp/repo"
mkdir "$repo"
export GIT_CONFIG_NOSYSTEM=1 HOME="$tmp" GIT_AUTHOR_NAME=e2e GIT_AUTHOR_EMAIL=e2e@example.com GIT_COMMITTER_NAME=e2e GIT_COMMITTER_EMAIL=e2e@example.com
git -C "$repo" init -q -b main
printf 'package main\n\nfunc main() {}\n' > "$repo/main.go"
git -C "$repo" add . && git -C "$repo" commit -qm init
printf 'package main\n\nfunc util() {}\n' > "$repo/util.go"
git -C "$repo" add . && git -C "$repo" commit -qm util
"$tmp/ctxpack" pack -C "$repo" --commit HEAD -o "$tmp/pack.json" --store --store-name pr-1 2>/dev/null

node "$tmp/client.mjs" "$tmp/ctxpack" "$repo"
