package server

import "github.com/prometheus/client_golang/prometheus"

// wsMetrics describes the websocket API's load.
type wsMetrics struct {
	connections   prometheus.Gauge
	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	subscriptions *prometheus.GaugeVec
	notifications *prometheus.CounterVec
	rejected      *prometheus.CounterVec
	dropped       prometheus.Counter
}

func newWSMetrics(reg prometheus.Registerer) *wsMetrics {
	m := &wsMetrics{
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "blockbook_websocket_connections", Help: "Open websocket connections.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_websocket_requests_total", Help: "Websocket requests by method and outcome (ok, error, limited).",
		}, []string{"method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "blockbook_websocket_request_duration_seconds", Help: "Websocket request latency by method.",
			Buckets: prometheus.ExponentialBuckets(0.0002, 2, 18),
		}, []string{"method"}),
		subscriptions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "blockbook_websocket_subscriptions", Help: "Websocket subscriptions by kind (addresses counts distinct addresses).",
		}, []string{"kind"}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_websocket_notifications_total", Help: "Websocket notifications sent by kind (dropped: the render queue was full).",
		}, []string{"kind"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_websocket_rejected_total", Help: "Websocket connections or frames refused, by reason.",
		}, []string{"reason"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "blockbook_websocket_slow_clients_dropped_total", Help: "Connections closed because their send queue overflowed.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.connections, m.requests, m.latency, m.subscriptions, m.notifications, m.rejected, m.dropped)
	}
	return m
}
