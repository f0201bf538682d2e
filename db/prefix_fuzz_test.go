package db

import (
	"errors"
	"testing"
)

func FuzzUnpackAddressPrefix(f *testing.F) {
	f.Add([]byte("bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"), []byte{})
	f.Add([]byte("bad address"), []byte{})
	f.Add([]byte("1BoatSLRHtKNngkdXEeobR76b53LETtpyT"), []byte{1})
	f.Fuzz(func(t *testing.T, key, val []byte) {
		addr, err := unpackAddressPrefix(key, val)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error is not ErrCorrupt: %v", err)
			}
			return
		}
		if string(addressPrefixKey(addr)) != string(key) || len(val) != 0 {
			t.Fatalf("accepted %q=%x as %q", key, val, addr)
		}
	})
}
