package compose

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/report"
)

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID          int                  `json:"id"`
		Title       string               `json:"title"`
		Datasource  struct{ UID string } `json:"datasource"`
		FieldConfig struct {
			Defaults struct {
				Thresholds struct {
					Steps []struct {
						Color string   `json:"color"`
						Value *float64 `json:"value"`
					} `json:"steps"`
				} `json:"thresholds"`
			} `json:"defaults"`
		} `json:"fieldConfig"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile("grafana/lockbench-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	return d
}

// exported gathers the real exporter's registry, after one observation of
// every kind so that each family appears, and returns the series names a
// query can use (a histogram's _bucket, _sum and _count) mapped to their
// family, and every label name.
func exported(t *testing.T) (series map[string]string, labels map[string]bool) {
	t.Helper()
	p := export.New()
	o := p.For(export.Labels{Strategy: "atomic", Driver: "goredis", Workload: "flash-sale", Retry: "fixed", Clients: 1, Scenario: 1})
	o.Acquired(1, time.Millisecond)
	o.Hold(time.Millisecond)
	o.AcquireFailed(1, false)
	o.Op()
	o.Error("timeout")
	o.TTL(100 * time.Millisecond)
	o.Violations(report.Violations{Overlap: 1})
	fams, err := p.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	series, labels = map[string]string{}, map[string]bool{"le": true}
	for _, f := range fams {
		name := f.GetName()
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				series[name+s] = name
			}
		} else {
			series[name] = name
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
	}
	if len(fams) != len(export.Names) {
		t.Fatalf("the exporter gathered %d families, want %d (export.Names)", len(fams), len(export.Names))
	}
	return series, labels
}

var (
	metricName = regexp.MustCompile(`\b(?:redis_lock|lockbench)_[a-z0-9_]+\b`)
	grouping   = regexp.MustCompile(`\b(?:by|on|without|ignoring)\s*\(([^)]*)\)`)
	matcher    = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"`)
)

// TestDashboardUsesExportedMetrics ties the dashboard to the code: every
// metric and label its queries name is one the exporter registers, and
// every family the exporter registers is on the dashboard.
func TestDashboardUsesExportedMetrics(t *testing.T) {
	d := readDashboard(t)
	series, labels := exported(t)
	var exprs []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			exprs = append(exprs, v.Definition)
		}
	}
	used := map[string]bool{}
	for _, e := range exprs {
		names := metricName.FindAllString(e, -1)
		if len(names) == 0 {
			t.Errorf("query %q names no lockbench metric", e)
		}
		for _, n := range names {
			fam, ok := series[n]
			if !ok {
				t.Errorf("query %q uses %s, which the exporter does not register", e, n)
			}
			used[fam] = true
		}
		for _, g := range grouping.FindAllStringSubmatch(e, -1) {
			for _, l := range strings.Split(g[1], ",") {
				if l = strings.TrimSpace(l); l != "" && !labels[l] {
					t.Errorf("query %q groups by label %q, which the exporter does not set", e, l)
				}
			}
		}
		for _, m := range matcher.FindAllStringSubmatch(e, -1) {
			if !labels[m[1]] {
				t.Errorf("query %q matches label %q, which the exporter does not set", e, m[1])
			}
		}
		if strings.Count(e, "(") != strings.Count(e, ")") || strings.Count(e, "{") != strings.Count(e, "}") {
			t.Errorf("query %q has unbalanced brackets", e)
		}
	}
	for _, fam := range series {
		if !used[fam] {
			t.Errorf("the exporter's %s is on no panel", fam)
		}
	}
}

// TestDashboardPanelsAndThresholds checks the panels the issue asks for
// and the alert thresholds the articles give (docs/claims.md, "Monitoring
// thresholds": wait > 500 ms, hold > 80 % of the TTL) as panel thresholds.
func TestDashboardPanelsAndThresholds(t *testing.T) {
	d := readDashboard(t)
	if d.UID != "lockbench" {
		t.Errorf("uid %q, want lockbench (compose/README.md links /d/lockbench)", d.UID)
	}
	ids := map[int]bool{}
	threshold := map[string][]float64{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q uses data source %q, want the ${datasource} variable", p.Title, p.Datasource.UID)
		}
		for _, s := range p.FieldConfig.Defaults.Thresholds.Steps {
			if s.Value != nil && s.Color == "red" {
				threshold[p.Title] = append(threshold[p.Title], *s.Value)
			}
		}
	}
	find := func(sub string) string {
		for _, p := range d.Panels {
			if strings.Contains(p.Title, sub) {
				return p.Title
			}
		}
		t.Errorf("no panel titled *%s*", sub)
		return ""
	}
	find("Operations per second by strategy")
	find("Failed acquires")
	find("Lock hold p99 vs TTL")
	if v := find("Safety violations"); !slices.Equal(threshold[v], []float64{1}) {
		t.Errorf("violations panel red from %v, want [1] (any violation)", threshold[v])
	}
	if w := find("Lock wait p50 / p99"); !slices.Equal(threshold[w], []float64{0.5}) {
		t.Errorf("wait panel red from %v s, want [0.5] (500 ms)", threshold[w])
	}
	if h := find("Lock hold p99 / TTL"); !slices.Equal(threshold[h], []float64{0.8}) {
		t.Errorf("hold/TTL panel red from %v, want [0.8] (80 %% of the TTL)", threshold[h])
	}
	var quantiles []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if m := regexp.MustCompile(`histogram_quantile\((0\.\d+), sum by \([^)]*\ble\b[^)]*\) \(rate\((\w+)_bucket`).FindStringSubmatch(tg.Expr); m != nil {
				quantiles = append(quantiles, m[1]+" "+m[2])
			}
		}
	}
	for _, want := range []string{"0.5 redis_lock_wait_duration_seconds", "0.99 redis_lock_wait_duration_seconds", "0.99 redis_lock_hold_duration_seconds"} {
		if !slices.Contains(quantiles, want) {
			t.Errorf("no histogram_quantile for %q (have %q)", want, quantiles)
		}
	}
}
