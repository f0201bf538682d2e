package rocksdb

// #include <stdlib.h>
// #include <rocksdb/c.h>
// rocksdb_mergeoperator_t *blockbook_merge_operator(uintptr_t cf, const char *name);
import "C"

import (
	"unsafe"

	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/db"
)

// setMerger makes cf's db.Merger the merge operator of o (reads and
// compactions merge through it). The options own the operator; it is set
// through the C API because grocksdb's Options.Destroy deletes an operator
// set with SetMergeOperator a second time, after the options released it,
// and so does each clone's.
func setMerger(o *grocksdb.Options, cf db.CF) {
	name := C.CString(cf.Merger().Name)
	defer C.free(unsafe.Pointer(name))
	op := C.blockbook_merge_operator(C.uintptr_t(cf), name)
	if op == nil {
		panic("rocksdb: out of memory for a merge operator")
	}
	C.rocksdb_options_set_merge_operator(cOptions(o), op)
}

func cOptions(o *grocksdb.Options) *C.rocksdb_options_t {
	return *(**C.rocksdb_options_t)(unsafe.Pointer(o))
}

// blockbookFullMerge merges for RocksDB (merge.c). The value it returns is
// malloc'ed; RocksDB copies it and merge.c frees it. A failed merge makes
// RocksDB report corruption.
//
//export blockbookFullMerge
func blockbookFullMerge(cf C.uintptr_t, existing *C.char, existingLen C.size_t, operands **C.char, lengths *C.size_t, n C.int,
	success *C.uchar, newLen *C.size_t) *C.char {
	*success, *newLen = 0, 0
	m := db.CF(cf).Merger()
	if m == nil || n < 0 {
		return nil
	}
	var stored []byte
	if existing != nil {
		stored = unsafe.Slice((*byte)(unsafe.Pointer(existing)), existingLen)
	}
	ptrs, lens := unsafe.Slice(operands, n), unsafe.Slice(lengths, n)
	ops := make([][]byte, n)
	for i := range ops {
		ops[i] = unsafe.Slice((*byte)(unsafe.Pointer(ptrs[i])), lens[i])
	}
	v, err := m.Merge(stored, ops)
	if err != nil {
		return nil
	}
	*success, *newLen = 1, C.size_t(len(v))
	return (*C.char)(C.CBytes(v))
}
