package server

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics counts API requests and their latency by endpoint.
type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_api_requests_total", Help: "Public API requests by endpoint and HTTP status.",
		}, []string{"endpoint", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "blockbook_api_request_duration_seconds", Help: "Public API request latency by endpoint.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"endpoint"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.latency)
	}
	return m
}

func (m *httpMetrics) observe(endpoint string, code int, d time.Duration) {
	m.requests.WithLabelValues(endpoint, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(endpoint).Observe(d.Seconds())
}
