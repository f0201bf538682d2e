#!/usr/bin/env bash
# Runs golangci-lint at the given version (the Makefile pins it) with the
# repository's .golangci.yml, installing that version into GOBIN or
# $(go env GOPATH)/bin first when it is missing or another version is
# there. The binary and its analysis cache (~/.cache/golangci-lint) persist
# between runs on one machine, so only the first run pays for building it
# (minutes).
set -euo pipefail
version=${1:?usage: scripts/lint.sh vX.Y.Z}
cd "$(dirname "$0")/.."
gobin=$(go env GOBIN)
if [ -z "$gobin" ]; then
	gopath=$(go env GOPATH)
	gobin=${gopath%%:*}/bin
fi
lint=$gobin/golangci-lint
if ! [ -x "$lint" ] || ! "$lint" version 2>/dev/null | grep -q "version ${version#v} "; then
	echo "installing golangci-lint $version into $gobin"
	GOBIN=$gobin go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version"
fi
exec "$lint" run ./...
