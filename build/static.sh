#!/usr/bin/env bash
# Builds a statically linked blockbook (RocksDB and its compression libraries
# linked in), for hosts without librocksdb. Needs the -dev packages of
# rocksdb, snappy, lz4, zstd, zlib and bzip2 (Debian: librocksdb-dev pulls
# them in).
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(git describe --tags --always --dirty 2>/dev/null || echo devel)
commit=$(git rev-parse --short=8 HEAD 2>/dev/null || echo unknown)
CGO_LDFLAGS="-Wl,-Bstatic -lrocksdb -lsnappy -llz4 -lzstd -lz -lbz2 -Wl,-Bdynamic -lstdc++ -lm -ldl -pthread" \
	go build -trimpath -tags grocksdb_no_link \
	-ldflags "-X main.version=$version -X main.gitCommit=$commit -X main.buildTime=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	-o bin/blockbook-static .
echo "bin/blockbook-static:"
ldd bin/blockbook-static | sed 's/^/  /'
