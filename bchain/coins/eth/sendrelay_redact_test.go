package eth

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// A provider's key never reaches the log, whether in its user, its path or
// its host, however Go's HTTP client writes the URL back.
func TestRedactProvider(t *testing.T) {
	provider := "https://user:s3cretpass@relay.example:8545/v3/s3cretkey"
	for _, err := range []error{
		&url.Error{Op: "Post", URL: "https://user:***@relay.example:8545/v3/s3cretkey", Err: errors.New("dial tcp relay.example:8545: connection refused")},
		errors.New("Post \"" + provider + "\": EOF"),
		errors.New("Post \"https://user:***@relay.example:8545/v3/s3cretkey\": EOF"),
	} {
		got := redact(err, provider)
		for _, secret := range []string{"s3cret", "user", "relay.example"} {
			if strings.Contains(got, secret) {
				t.Errorf("%q redacted to %q, which holds %q", err, got, secret)
			}
		}
	}
}
