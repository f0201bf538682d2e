package app

import (
	"io"
	"strings"
	"testing"
	"time"
)

// -replica needs no other flag, has defaults for its lag thresholds, and
// refuses the flags that would write the index.
func TestReplicaFlags(t *testing.T) {
	o, err := ParseFlags([]string{"-blockchaincfg=x", "-datadir=/d", "-replica"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Replica.On || o.Replica.Dir != "" || o.Replica.MaxLag != 5*time.Second || o.Replica.MaxBlocks != 2 {
		t.Fatalf("replica options %+v", o.Replica)
	}
	for _, args := range [][]string{{"-sync"}, {"-rollback=5"}, {"-repair"}, {"-computedbstats"}, {"-replicamaxlag=100ms"}} {
		_, err := ParseFlags(append([]string{"-blockchaincfg=x", "-replica"}, args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "replica") {
			t.Errorf("-replica %v: %v", args, err)
		}
	}
	if _, err := ParseFlags([]string{"-blockchaincfg=x", "-sync", "-replicamaxlag=100ms"}, io.Discard); err != nil {
		t.Errorf("replica thresholds without -replica: %v", err)
	}
}
