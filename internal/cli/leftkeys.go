package cli

// The keys a run leaves on the user's servers: counted after the run,
// with the lockbench clean command that removes them.

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/redisadmin"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// cleanCommand is the lockbench clean command line that deletes run
// runID's keys on the servers of f: the --addr addresses (without the
// login of a URL) and the connection flags given, never a password or a
// user name (conn, appended, says to add them).
func cleanCommand(f *runFlags, conn string, runID string) string {
	var items []string
	for _, a := range splitList(f.addr) {
		items = append(items, withoutLogin(a))
	}
	args := []string{"lockbench", "clean", "--addr", shellQuote(strings.Join(items, ","))}
	for _, o := range []struct{ flag, v string }{
		{"--tls-ca-file", f.tlsCA}, {"--tls-cert-file", f.tlsCert},
		{"--tls-key-file", f.tlsKey}, {"--tls-server-name", f.tlsServerName}, {"--sentinel-master", f.sentinelMaster},
	} {
		if o.v != "" {
			args = append(args, o.flag, shellQuote(o.v))
		}
	}
	for _, o := range []struct {
		flag string
		on   bool
	}{{"--tls", f.tls}, {"--tls-insecure-skip-verify", f.tlsInsecure}, {"--cluster", f.cluster}} {
		if o.on {
			args = append(args, o.flag)
		}
	}
	args = append(args, "--run-id", runID)
	return strings.Join(args, " ") + conn
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./:,=@.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:,=@[]") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// reportLeftKeys tells, after a run on the user's servers (--addr, and
// the --resource-addr server), how many of its keys are still there (a stall, a failed clean-up, a run that
// stopped early, or --keep-keys) and the exact command that removes them;
// or, when it cannot count them, that command anyway. Nothing is printed
// when none are left. It reports whether none are left (counted).
func reportLeftKeys(p *plan, f *runFlags, runID string, w io.Writer) (none bool) {
	if len(p.addrs) == 0 || len(p.scenarios) == 0 {
		return true
	}
	prefix := "lockbench:" + runID + ":"
	note := ""
	if p.conn.Password != "" || p.conn.Username != "" {
		note = " (with your login: --username, --password or $LOCKBENCH_PASSWORD)"
	}
	expire := fmt.Sprintf("they expire by themselves at most --warmup + --duration + %v after their scenario started", workloads.SafetyMargin)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	left := 0
	var failed []string
	nodes := p.external(strategies.Masters)
	if p.resource != nil { // --resource-addr: the data's server
		nodes = append(nodes, *p.resource)
	}
	for _, n := range nodes {
		ds, err := engine.Open(ctx, p.scenarios[0].Driver, []engine.Node{n}, 1)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", n.Addr, err))
			continue
		}
		k, err := redisadmin.CountKeys(ctx, ds[0], prefix)
		ds[0].Close()
		left += k
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", n.Addr, err))
		}
	}
	cmd := cleanCommand(f, note, runID)
	if p.resource != nil {
		res := *f
		res.addr, res.cluster, res.sentinelMaster = f.resourceAddr, false, ""
		cmd += ", and on the resource: " + cleanCommand(&res, note, runID)
	}
	switch {
	case len(failed) > 0:
		fmt.Fprintf(w, "lockbench: warning: could not count the keys this run left under %s (%s); %s; to remove them now: %s\n",
			prefix, strings.Join(failed, "; "), expire, cmd)
	case left > 0 && p.scenarios[0].Env.KeepKeys:
		fmt.Fprintf(w, "lockbench: --keep-keys: %d keys kept under %s; %s; to remove them: %s\n", left, prefix, expire, cmd)
	case left > 0:
		fmt.Fprintf(w, "lockbench: warning: this run left %d keys under %s (its clean-up did not finish); %s; to remove them now: %s\n",
			left, prefix, expire, cmd)
	}
	return len(failed) == 0 && left == 0
}

// withoutLogin is a --addr item with the user name and password of a
// redis:// or rediss:// URL taken out.
func withoutLogin(a string) string {
	u, err := url.Parse(a)
	if err != nil || u.User == nil || !strings.Contains(a, "://") {
		return redact(a)
	}
	u.User = nil
	return u.String()
}
