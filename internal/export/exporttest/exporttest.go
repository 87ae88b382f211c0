// Package exporttest has helpers for tests that read lockbench's
// Prometheus metrics (internal/export), gathered in-process or scraped.
package exporttest

import dto "github.com/prometheus/client_model/go"

// Matching returns the metrics of the family named name, in families,
// whose labels include every pair of want (nil: all of them).
func Matching(families []*dto.MetricFamily, name string, want map[string]string) []*dto.Metric {
	var out []*dto.Metric
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue next
				}
			}
			out = append(out, m)
		}
	}
	return out
}
