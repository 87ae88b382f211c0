package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStaleHelpText: run's --repeat names its interval for what it is
// (order statistics of the median, as internal/report.MedianCI computes
// it; never a bootstrap), and compose/README.md no longer says lockbench
// cannot use Sentinels or a Cluster (--sentinel-master and --cluster).
func TestStaleHelpText(t *testing.T) {
	u := newRunCmd().Flags().Lookup("repeat").Usage
	if !strings.Contains(u, "order statistics") || strings.Contains(strings.ToLower(u), "bootstrap") {
		t.Errorf("run --repeat help %q: want the interval from order statistics, no bootstrap", u)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "compose", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(strings.Fields(string(b)), " ")
	for _, stale := range []string{"does not yet talk to Sentinels", "not yet: see below"} {
		if strings.Contains(s, stale) {
			t.Errorf("compose/README.md still says %q", stale)
		}
	}
	for _, want := range []string{"--cluster --addr 127.0.0.1:7001", "--sentinel-master lockbench --addr 127.0.0.1:26390"} {
		if !strings.Contains(s, want) {
			t.Errorf("compose/README.md: no %q", want)
		}
	}
}
