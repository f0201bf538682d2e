package rocksdb

// #cgo LDFLAGS: -lrocksdb
// #include <stdlib.h>
// #include <rocksdb/c.h>
import "C"

import (
	"errors"
	"slices"
	"unsafe"

	"github.com/linxGnu/grocksdb"
)

// batchedGet reads keys of one column family through RocksDB's batched
// MultiGet (rocksdb_batched_multi_get_cf), which grocksdb does not wrap:
// grocksdb's MultiGetCF calls the older vector MultiGet, a point lookup per
// key. The batched one looks each file up once for all its keys and
// checks their Bloom filter bits together, which is where a bulk load's
// balance and prevout reads spend their time (docs/performance.md).
// Absent keys give nil.
func batchedGet(rdb *grocksdb.DB, ro *grocksdb.ReadOptions, h *grocksdb.ColumnFamilyHandle, keys [][]byte) ([][]byte, error) {
	out := make([][]byte, len(keys))
	err := batchedVisit(rdb, ro, h, keys, func(i int, v []byte) error {
		if v != nil {
			out[i] = slices.Clone(v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// batchedVisit is batchedGet showing fn each value where RocksDB pinned
// it, uncopied (db.ManyVisitor); every value is released, also after an
// error.
func batchedVisit(rdb *grocksdb.DB, ro *grocksdb.ReadOptions, h *grocksdb.ColumnFamilyHandle, keys [][]byte, fn func(i int, v []byte) error) error {
	n := len(keys)
	if n == 0 {
		return nil // the C arrays below need an element
	}
	total := 0
	for _, k := range keys {
		total += len(k)
	}
	// The key bytes and every array RocksDB reads or fills live in C
	// memory: cgo forbids handing C an array of Go pointers.
	buf := C.malloc(C.size_t(max(total, 1)))
	defer C.free(buf)
	ptrs := cArray[*C.char](n)
	defer C.free(unsafe.Pointer(&ptrs[0]))
	sizes := cArray[C.size_t](n)
	defer C.free(unsafe.Pointer(&sizes[0]))
	vals := cArray[*C.rocksdb_pinnableslice_t](n)
	defer C.free(unsafe.Pointer(&vals[0]))
	errs := cArray[*C.char](n)
	defer C.free(unsafe.Pointer(&errs[0]))
	dst := unsafe.Slice((*byte)(buf), max(total, 1))
	off := 0
	for i, k := range keys {
		copy(dst[off:], k)
		ptrs[i] = (*C.char)(unsafe.Add(buf, off))
		sizes[i] = C.size_t(len(k))
		off += len(k)
	}
	C.rocksdb_batched_multi_get_cf(cDB(rdb), cReadOptions(ro), cHandle(h), C.size_t(n),
		&ptrs[0], &sizes[0], &vals[0], &errs[0], false)
	var first error
	for i := range n {
		if errs[i] != nil {
			if first == nil {
				first = errors.New(C.GoString(errs[i]))
			}
			C.rocksdb_free(unsafe.Pointer(errs[i]))
		}
		var v []byte
		if vals[i] != nil {
			var l C.size_t
			p := C.rocksdb_pinnableslice_value(vals[i], &l)
			v = unsafe.Slice((*byte)(unsafe.Pointer(p)), int(l))
			if v == nil {
				v = []byte{} // present and empty, unlike an absent key
			}
		}
		if first == nil {
			first = fn(i, v)
		}
		if vals[i] != nil {
			C.rocksdb_pinnableslice_destroy(vals[i])
		}
	}
	return first
}

// cArray allocates a zeroed C array of n elements of T.
func cArray[T any](n int) []T {
	var zero T
	p := C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(zero)))
	return unsafe.Slice((*T)(p), n)
}

// grocksdb keeps the C pointer as the first field of these types
// (v1.7.15, pinned in go.mod); TestBatchedGetMatchesGet fails if an
// upgrade moves it.
func cDB(d *grocksdb.DB) *C.rocksdb_t { return *(**C.rocksdb_t)(unsafe.Pointer(d)) }

func cReadOptions(o *grocksdb.ReadOptions) *C.rocksdb_readoptions_t {
	return *(**C.rocksdb_readoptions_t)(unsafe.Pointer(o))
}

func cHandle(h *grocksdb.ColumnFamilyHandle) *C.rocksdb_column_family_handle_t {
	return *(**C.rocksdb_column_family_handle_t)(unsafe.Pointer(h))
}
