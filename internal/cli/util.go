package cli

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"syscall"

	"github.com/lockbench/lockbench/internal/registry"
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
