// RocksDB's merge operator for the column families with a db.Merger: the
// merge itself runs in Go (merge.go); this file only adapts the C API's
// callbacks. Partial merges are declined, so RocksDB keeps the operands
// until it meets the stored value or the last level.
#include <stdlib.h>
#include <string.h>
#include <rocksdb/c.h>
#include "_cgo_export.h"

typedef struct {
	uintptr_t cf;
	char *name;
} merger_state;

static char *full_merge(void *state, const char *key, size_t key_length,
		const char *existing, size_t existing_length,
		const char *const *operands, const size_t *lengths, int n,
		unsigned char *success, size_t *new_length) {
	(void)key;
	(void)key_length;
	return blockbookFullMerge(((merger_state *)state)->cf, (char *)existing, existing_length,
		(char **)operands, (size_t *)lengths, n, success, new_length);
}

static char *partial_merge(void *state, const char *key, size_t key_length,
		const char *const *operands, const size_t *lengths, int n,
		unsigned char *success, size_t *new_length) {
	(void)state;
	(void)key;
	(void)key_length;
	(void)operands;
	(void)lengths;
	(void)n;
	*success = 0;
	*new_length = 0;
	return NULL;
}

static void delete_value(void *state, const char *value, size_t length) {
	(void)state;
	(void)length;
	free((void *)value);
}

static void destroy(void *state) {
	free(((merger_state *)state)->name);
	free(state);
}

static const char *name_of(void *state) { return ((merger_state *)state)->name; }

rocksdb_mergeoperator_t *blockbook_merge_operator(uintptr_t cf, const char *name) {
	merger_state *s = malloc(sizeof(merger_state));
	if (s == NULL) {
		return NULL;
	}
	s->cf = cf;
	s->name = strdup(name);
	if (s->name == NULL) {
		free(s);
		return NULL;
	}
	return rocksdb_mergeoperator_create(s, destroy, full_merge, partial_merge, delete_value, name_of);
}
