package rocksdb

// #include <stdlib.h>
// #include <rocksdb/c.h>
// size_t blockbook_iter_fill(rocksdb_iterator_t *it, const char *prefix, size_t plen, int reverse, int advance,
//		char *buf, size_t cap, size_t max, size_t *used, int *end, int *pending, size_t *need);
import "C"

import (
	"encoding/binary"
	"sync"
	"unsafe"

	"github.com/linxGnu/grocksdb"
)

// iterBuf is the size of a pooled batch buffer; an entry larger than it
// gets a buffer of its own.
const iterBuf = 64 << 10

// maxBatch is the most entries one call copies. Batches start at one
// entry and double, and the iterator steps past a batch's last entry only
// when the next batch is asked for, so that a scan its caller stops early
// has read ahead fewer entries than it took (none after a single row).
const maxBatch = 256

var iterBufs = sync.Pool{New: func() any { b := make([]byte, iterBuf); return &b }}

// iteratorIsOnePointer fails to compile unless grocksdb.Iterator is one
// pointer wide, as cIter reads it (an upgrade adding a field would make
// every scan hand C a wrong pointer).
var _ = [1]struct{}{}[unsafe.Sizeof(grocksdb.Iterator{})-unsafe.Sizeof(uintptr(0))]

// cIter is the C iterator inside a grocksdb.Iterator (its only field).
func cIter(it *grocksdb.Iterator) *C.rocksdb_iterator_t {
	return *(**C.rocksdb_iterator_t)(unsafe.Pointer(it))
}

// visitBatched calls fn on the entries from it's position on (forward, or
// backward if reverse) while their keys have prefix, until fn returns
// false or an error; fn's slices are valid during the call only. done
// reports whether the entries ran out (the caller then checks the
// iterator's error) rather than fn stopping.
func visitBatched(it *grocksdb.Iterator, prefix []byte, reverse bool, fn func(k, v []byte) (bool, error)) (done bool, err error) {
	bp := iterBufs.Get().(*[]byte)
	defer iterBufs.Put(bp)
	buf := *bp
	var cp *C.char
	if len(prefix) > 0 {
		cp = (*C.char)(unsafe.Pointer(&prefix[0]))
	}
	rev := C.int(0)
	if reverse {
		rev = 1
	}
	c := cIter(it)
	var pending C.int // the iterator is on the last entry copied
	for batch := 1; ; batch = min(2*batch, maxBatch) {
		var used, need C.size_t
		var end C.int
		n := C.blockbook_iter_fill(c, cp, C.size_t(len(prefix)), rev, pending, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)),
			C.size_t(batch), &used, &end, &pending, &need)
		if n == 0 && need > 0 {
			buf = make([]byte, int(need)) // this entry alone; the pool keeps its own size
			continue
		}
		b := buf[:used]
		for range n {
			kl, vl := int(binary.NativeEndian.Uint32(b)), int(binary.NativeEndian.Uint32(b[4:]))
			k, v := b[8:8+kl:8+kl], b[8+kl:8+kl+vl:8+kl+vl]
			b = b[8+kl+vl:]
			more, err := fn(k, v)
			if err != nil || !more {
				return false, err
			}
		}
		if end != 0 {
			return true, nil
		}
	}
}
