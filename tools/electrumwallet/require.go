package electrumwallet

import (
	"os"
	"testing"
)

// Require skips a test when the electrum program is missing, except under
// CI=true, where it fails: CI installs it (scripts/install-deps.sh test).
func Require(t testing.TB) {
	t.Helper()
	if _, err := Find(""); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v: CI installs it with scripts/install-deps.sh test", err)
		}
		t.Skip(err)
	}
}
