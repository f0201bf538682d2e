package rocksdb

// #include <malloc.h>
import "C"

// glibc's defaults let a long bulk load keep hundreds of megabytes it has
// freed (docs/performance.md, "Mainnet-shaped sync at scale"): after a
// large buffer is freed it raises its mmap threshold, so later large
// buffers (compaction, table building, dictionary training) come from its
// arenas and stay there fragmented; and it opens up to eight arenas per
// core. A fixed threshold sends buffers of 128 KiB and more back to the
// system when freed; four arenas share their free chunks. Set before
// RocksDB starts a thread.
func init() {
	C.mallopt(C.M_MMAP_THRESHOLD, 128<<10)
	C.mallopt(C.M_ARENA_MAX, 4)
}
