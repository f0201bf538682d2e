package promreg

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// CoinLabeled gathers g's metrics with the constant label coin=<coin> on
// each of ours, as Blockbook labels every metric it exports, so that a
// dashboard built for Blockbook's metrics (which selects by coin) works
// unchanged. The Go runtime's and the process's metrics stay unlabeled,
// as Blockbook's are. A metric that already has a coin label keeps it.
func CoinLabeled(g prometheus.Gatherer, coin string) prometheus.Gatherer {
	name := "coin"
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := g.Gather()
		for _, mf := range mfs {
			if runtimeMetric(mf.GetName()) {
				continue
			}
			for _, m := range mf.Metric {
				if !hasLabel(m, name) {
					// Label pairs are kept sorted by name.
					at := sort.Search(len(m.Label), func(i int) bool { return m.Label[i].GetName() > name })
					m.Label = slices.Insert(m.Label, at, &dto.LabelPair{Name: &name, Value: &coin})
				}
			}
		}
		return mfs, err
	})
}

func runtimeMetric(name string) bool {
	return strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") || strings.HasPrefix(name, "promhttp_")
}

func hasLabel(m *dto.Metric, name string) bool {
	for _, l := range m.Label {
		if l.GetName() == name {
			return true
		}
	}
	return false
}

// coinPair matches the coin label pair CoinLabeled adds, with the comma
// or braces that go with it in the text format.
var coinPair = regexp.MustCompile(`\{coin="[^"]*"\}|coin="[^"]*",|,coin="[^"]*"`)

// WithoutCoin removes the coin label from Prometheus text-format lines,
// for readers that key samples by name and their own labels.
func WithoutCoin(text string) string {
	return coinPair.ReplaceAllString(text, "")
}
