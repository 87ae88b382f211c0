package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/agnivade/levenshtein"
)

// gitCommit is set by the Makefile with -ldflags "-X main.gitCommit=...".
var gitCommit string

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

// suggest returns `; did you mean "x"?` for the valid name nearest to s
// (edit distance at most 3, or a name that contains s), or "".
func suggest(s string, valid []string) string {
	// A suggestion must be close: at most 2 edits, and fewer than half the
	// length of what was typed ("foo" is not "fair").
	best, bestD := "", min(3, (len(s)+1)/2)
	for _, v := range valid {
		d := levenshtein.ComputeDistance(strings.ToLower(s), v)
		if d < bestD || (best == "" && len(s) >= 3 && strings.Contains(v, strings.ToLower(s))) {
			best, bestD = v, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func commit() string {
	if gitCommit != "" {
		return gitCommit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

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
