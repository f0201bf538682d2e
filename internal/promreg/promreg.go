// Package promreg registers Prometheus collectors that more than one
// instance may register on the same registry (tests run several mempools
// or downloaders in one process).
package promreg

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c, or returns the collector already registered under
// its name.
func Register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if ex, ok := are.ExistingCollector.(T); ok {
				return ex
			}
		}
	}
	return c
}
