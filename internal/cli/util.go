package cli

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
)

// splitList splits a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// splitRetry splits --retry on commas, keeping a policy's own
// "param=value" items with it: "fixed,backoff:start=10ms,cap=1s" is two
// specs.
func splitRetry(s string) []string {
	var out []string
	for _, p := range splitList(s) {
		if strings.Contains(p, "=") && !strings.Contains(p, ":") && len(out) > 0 {
			out[len(out)-1] += "," + p
			continue
		}
		out = append(out, p)
	}
	return out
}

// suggest is registry.Suggest, for names that are not a registry's (flags,
// scenario-file fields, claim ids).
func suggest(s string, valid []string) string { return registry.Suggest(s, valid) }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// commit is the VCS revision lockbench was built from (see readBuildInfo).
func commit() string { return readBuildInfo().Commit }

// maxRSSMB is the process's peak resident set size in MB (getrusage; Linux
// reports KB).
func maxRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// wrap breaks s at spaces into lines of at most width characters.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		if n > 0 && n+1+len(w) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// parsePercent reads "5%" or "0.05".
func parsePercent(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || v < 0 || v != v {
		return 0, fmt.Errorf("%q is not a percentage like 5%% or a fraction like 0.05", s)
	}
	if pct {
		v /= 100
	}
	return v, nil
}

// sizeValue is a flag holding a byte count (report.ParseSize).
type sizeValue struct{ n *int64 }

func (v sizeValue) String() string {
	if v.n == nil {
		return ""
	}
	return report.FormatSize(*v.n)
}

func (v sizeValue) Set(s string) error {
	n, err := report.ParseSize(s)
	if err != nil {
		return err
	}
	*v.n = n
	return nil
}

func (sizeValue) Type() string { return "size" }

// addMaxInputFlag adds --max-input-size to a command that reads result
// files, into max (default report.DefaultMaxInput, 512MiB).
func addMaxInputFlag(cmd *cobra.Command, max *int64) {
	*max = report.DefaultMaxInput
	cmd.Flags().Var(sizeValue{max}, "max-input-size", "largest result file read, like 512MiB or 64KiB: a larger file, or one that is not a regular file (a directory, a FIFO, /dev/zero), is refused (exit 2)")
}

// mkdirNew makes dir and its missing parents (0755), as os.MkdirAll, and
// returns the directories it made, outermost first, so that a run that
// ends without writing into them can remove them (removeEmptyDirs).
func mkdirNew(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	slices.Reverse(missing)
	return missing, nil
}

// removeEmptyDirs removes the directories mkdirNew made, innermost first,
// each only while empty (os.Remove): what the run put there stays.
func removeEmptyDirs(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		if os.Remove(made[i]) != nil {
			return
		}
	}
}
