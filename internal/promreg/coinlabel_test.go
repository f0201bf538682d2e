package promreg

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
)

// Our metrics get Blockbook's constant coin label, in name order; the
// runtime's do not, and a metric's own labels stay.
func TestCoinLabeled(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "blockbook_x_total", Help: "x"}, []string{"kind", "a"})
	reg.MustRegister(c)
	c.WithLabelValues("k", "v").Add(2)
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "blockbook_y", Help: "y"}))
	mfs, err := CoinLabeled(reg, "Bitcoin").Gather()
	if err != nil {
		t.Fatal(err)
	}
	labels := func(m *dto.Metric) string {
		var s []string
		for _, l := range m.Label {
			s = append(s, l.GetName()+"="+l.GetValue())
		}
		return strings.Join(s, ",")
	}
	got := map[string]string{}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			if strings.HasPrefix(mf.GetName(), "go_") {
				if hasLabel(m, "coin") {
					t.Fatalf("%s labeled with coin", mf.GetName())
				}
				continue
			}
			got[mf.GetName()] = labels(m)
		}
	}
	if got["blockbook_x_total"] != "a=v,coin=Bitcoin,kind=k" || got["blockbook_y"] != "coin=Bitcoin" {
		t.Fatalf("labels %v", got)
	}
}

func TestWithoutCoin(t *testing.T) {
	for in, want := range map[string]string{
		`blockbook_y{coin="Bitcoin Regtest"} 0`:              `blockbook_y 0`,
		`blockbook_x_total{a="v",coin="Bitcoin",kind="k"} 2`: `blockbook_x_total{a="v",kind="k"} 2`,
		`blockbook_x_total{coin="Bitcoin",kind="k"} 2`:       `blockbook_x_total{kind="k"} 2`,
		`blockbook_x_total{a="v",coin="Bitcoin"} 2`:          `blockbook_x_total{a="v"} 2`,
		`go_goroutines 7`: `go_goroutines 7`,
	} {
		if got := WithoutCoin(in); got != want {
			t.Errorf("WithoutCoin(%s) = %s, want %s", in, got, want)
		}
	}
}
