#!/usr/bin/env bash
# Installs the system packages the build and tests need (RocksDB headers for
# cgo, Chromium for the explorer's browser tests) on
# Debian/Ubuntu, using sudo when not root. Does nothing when present.
set -euo pipefail
need=()
for pkg in librocksdb-dev chromium; do
	dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
command -v npm >/dev/null 2>&1 || need+=(npm)
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
