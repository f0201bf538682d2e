package bip352

import (
	"syscall"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
)

// TestVectorAddresses: the BIP's receiving cases give their addresses
// (the first, unlabeled one) from the scan key and the spend key.
func TestVectorAddresses(t *testing.T) {
	n := 0
	for _, c := range loadVectors(t) {
		for _, r := range c.Receiving {
			if len(r.Expected.Addresses) == 0 {
				continue
			}
			spend, _ := btcec.PrivKeyFromBytes(unhex(t, r.Given.KeyMaterial.Spend))
			got, err := Address("sp", unhex(t, r.Given.KeyMaterial.Scan), spend.PubKey().SerializeCompressed())
			if err != nil {
				t.Fatal(err)
			}
			if got != r.Expected.Addresses[0] {
				t.Fatalf("%s: address %s, want %s", c.Comment, got, r.Expected.Addresses[0])
			}
			n++
		}
	}
	if n < 20 {
		t.Fatalf("only %d addresses checked", n)
	}
	if _, err := Address("sp", make([]byte, 32), make([]byte, 33)); err == nil {
		t.Fatal("a zero scan key gave an address")
	}
}

// BenchmarkScan is the server's cost per eligible tx and subscriber of
// blockchain.silentpayments.subscribe: a tx of two taproot outputs that
// does not pay the receiver (the common case), scanned with the change
// label and one more; ns/op is per tx on one core.
func BenchmarkScan(b *testing.B) {
	spend, _ := btcec.PrivKeyFromBytes(append(make([]byte, 31), 9))
	s, err := NewScanner(append(make([]byte, 31), 7), spend.PubKey().SerializeCompressed(), []uint32{1})
	if err != nil {
		b.Fatal(err)
	}
	type tx struct {
		tweak []byte
		outs  [][32]byte
	}
	var txs []tx
	for i := range 64 {
		k, _ := btcec.PrivKeyFromBytes([]byte{byte(i + 1), 1, 2, 3})
		o1, _ := btcec.PrivKeyFromBytes([]byte{byte(i + 1), 4})
		o2, _ := btcec.PrivKeyFromBytes([]byte{byte(i + 1), 5})
		var a, c [32]byte
		copy(a[:], o1.PubKey().SerializeCompressed()[1:])
		copy(c[:], o2.PubKey().SerializeCompressed()[1:])
		txs = append(txs, tx{k.PubKey().SerializeCompressed(), [][32]byte{a, c}})
	}
	cpu0 := cpuTime()
	n := 0
	for i := 0; b.Loop(); i++ {
		t := txs[i%len(txs)]
		if m, err := s.Scan(t.tweak, t.outs); err != nil || len(m) > 0 {
			b.Fatal(m, err)
		}
		n++
	}
	// The machine is shared: the process's CPU time per tx is the figure
	// that does not move with the other jobs.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/op")
}

// cpuTime is the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
