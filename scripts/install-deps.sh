#!/usr/bin/env bash
# Installs the system packages one make goal needs, on Debian/Ubuntu, using
# sudo when not root; does nothing when they are present.
#   build  RocksDB headers for cgo (the binary, `make run`, `make run-eth`)
#          and litecoind (`make run COIN=litecoin`)
#   test   build's (litecoind is the end-to-end tests' second real node),
#          plus Chromium and fonts-dejavu-core (the explorer's browser
#          tests; its screenshots are taken with these fonts only), nginx (the
#          replica test's load balancer), HAProxy (the documented
#          load-balancer examples are checked with both), Electrum (the
#          real Electrum wallet's test) and npm (the wallet client and HTML
#          checks)
#   deb    build's, plus dpkg-dev (dpkg-shlibdeps finds the library
#          dependencies of the Debian packages)
set -euo pipefail
goal=${1:-test}
pkgs=(librocksdb-dev)
case "$goal" in
build) pkgs+=(litecoind) ;;
test) pkgs+=(litecoind chromium fonts-dejavu-core nginx haproxy electrum) ;;
deb) pkgs+=(dpkg-dev) ;;
*)
	echo "usage: $0 build|test|deb" >&2
	exit 2
	;;
esac
need=()
for pkg in "${pkgs[@]}"; do
	dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "$goal" = test ] && ! command -v npm >/dev/null 2>&1; then
	need+=(npm)
fi
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
