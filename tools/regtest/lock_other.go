//go:build !unix

package regtest

// lockFile is a no-op where flock is unavailable; the atomic rename of the
// built binary still keeps concurrent builds from exposing a partial file.
func lockFile(string) (func(), error) { return func() {}, nil }
