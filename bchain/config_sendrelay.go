package bchain

import (
	"fmt"
	"time"
)

// Blockbook's retentions when an alternative send provider is configured:
// private relays drop pending txs fast, so the hour-scale public default
// does not apply.
const (
	defaultMempoolTimeoutWithRelay = 10 * time.Minute
	defaultAlternativeMempoolTime  = 5 * time.Minute
)

// MempoolTimeout is how long a pending tx stays pending: mempoolTxTimeout
// when set (0 keeps txs until the node drops them), else 10 minutes with an
// alternative send provider, else mempoolTxTimeoutHours.
func (c *Config) MempoolTimeout(relay bool) (time.Duration, error) {
	if c.MempoolTxTimeout != "" {
		d, err := time.ParseDuration(c.MempoolTxTimeout)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("%w: mempoolTxTimeout %q is not a non-negative duration", ErrConfig, c.MempoolTxTimeout)
		}
		return d, nil
	}
	if relay {
		return defaultMempoolTimeoutWithRelay, nil
	}
	return time.Duration(c.MempoolTxTimeoutHours) * time.Hour, nil
}

// AlternativeMempoolTimeout is how long a tx sent through the alternative
// providers (and its sender's nonce routing) counts as pending there:
// alternativeMempoolTxTimeout, 5 minutes by default.
func (c *Config) AlternativeMempoolTimeout() (time.Duration, error) {
	if c.AlternativeMempoolTxTimeout == "" {
		return defaultAlternativeMempoolTime, nil
	}
	d, err := time.ParseDuration(c.AlternativeMempoolTxTimeout)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: alternativeMempoolTxTimeout %q is not a positive duration", ErrConfig, c.AlternativeMempoolTxTimeout)
	}
	return d, nil
}
