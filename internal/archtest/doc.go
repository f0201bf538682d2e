// Package archtest holds the repository's guard rails, as tests that run
// with the rest of the suite: the import rules between the layers (the
// tables in imports_test.go, which docs/architecture.md points to), the
// file-size and function-length limits (size_test.go) and the rule that
// every decoder of the store's schema has a fuzz target (fuzz_test.go).
// It has no code of its own; this file only documents it.
package archtest
