package cli

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/strategies"
)

// matrixUse is what a run's matrix uses, as flagRules read it.
type matrixUse struct {
	strats      []string
	addrs       []string            // the --addr servers (host:port)
	tls         bool                // TLS to the --addr servers (rediss:// or --tls)
	topo        strategies.Topology // --topology ("" = per strategy)
	topoMasters bool                // --topology masters:N
}

// startsMasters reports whether a scenario runs on several independent
// masters that lockbench starts with --nodes of them (redlock without
// --addr and --topology masters:N).
func (m matrixUse) startsMasters() bool {
	if len(m.addrs) > 0 || m.topoMasters {
		return false
	}
	for _, st := range m.strats {
		if strategies.TopologyOf(st) == strategies.Masters {
			return true
		}
	}
	return false
}

// allOwnRetry reports whether every strategy of the matrix runs a lock
// library's own retry loop (Info.OwnsRetry) or waits in its lock's queue
// (Info.Queues), so that --retry applies to none of them.
func (m matrixUse) allOwnRetry() bool {
	for _, st := range m.strats {
		if info := strategies.InfoOf(st); !info.OwnsRetry && !info.Queues {
			return false
		}
	}
	return len(m.strats) > 0
}

// layoutless reports whether a strategy of the matrix has no layout of
// its own, so that --topology chooses it.
func (m matrixUse) layoutless() bool {
	for _, st := range m.strats {
		if strategies.TopologyOf(st) == strategies.Standalone {
			return true
		}
	}
	return false
}

// flagRule says when a common run flag means something: given (on the
// command line or in a scenario file, or a value other than its default)
// while applies is false, the run is refused, the message naming what
// the flag goes with. The plugins' own parameters follow the same rule
// from their declarations (unusedParams).
type flagRule struct {
	flag    string
	given   func(f *runFlags) bool // its value differs from the default
	applies func(f *runFlags, m matrixUse) bool
	with    string // "--X goes with <with>"
}

func withAddr(f *runFlags, m matrixUse) bool { return f.addr != "" }

const addrNote = "--addr (the servers lockbench starts get a random password, no TLS)"

// flagRules is the one table of the common run flags that apply to some
// runs only.
var flagRules = []flagRule{
	{"password", func(f *runFlags) bool { return f.password != "" }, withAddr, addrNote},
	{"password-file", func(f *runFlags) bool { return f.passwordFile != "" }, withAddr, addrNote},
	{"username", func(f *runFlags) bool { return f.username != "" }, withAddr, addrNote},
	{"tls", func(f *runFlags) bool { return f.tls }, withAddr, addrNote},
	{"cluster", func(f *runFlags) bool { return f.cluster }, withAddr, "--addr (the nodes of your Cluster; --topology cluster starts one)"},
	{"sentinel-master", func(f *runFlags) bool { return f.sentinelMaster != "" }, withAddr, "--addr (your Sentinels; --topology sentinel starts some)"},
	{"allow-nonempty", func(f *runFlags) bool { return f.allowNonempty }, withAddr, "--addr (the servers lockbench starts are always empty)"},
	{"resource-addr", func(f *runFlags) bool { return f.resourceAddr != "" },
		func(f *runFlags, _ matrixUse) bool { return f.addr != "" && f.resource == engine.ResourceSeparate },
		"--addr and --resource separate (without --addr, lockbench starts the resource's server)"},
	{"sentinel-password", func(f *runFlags) bool { return f.sentinelPassword != "" },
		func(f *runFlags, _ matrixUse) bool { return f.sentinelMaster != "" }, "--sentinel-master"},
	{"sentinel-password-file", func(f *runFlags) bool { return f.sentinelPasswordFile != "" },
		func(f *runFlags, _ matrixUse) bool { return f.sentinelMaster != "" }, "--sentinel-master"},
	{"tls-ca-file", func(f *runFlags) bool { return f.tlsCA != "" }, usesTLS, tlsNote},
	{"tls-cert-file", func(f *runFlags) bool { return f.tlsCert != "" }, usesTLS, tlsNote},
	{"tls-key-file", func(f *runFlags) bool { return f.tlsKey != "" }, usesTLS, tlsNote},
	{"tls-server-name", func(f *runFlags) bool { return f.tlsServerName != "" }, usesTLS, tlsNote},
	{"tls-insecure-skip-verify", func(f *runFlags) bool { return f.tlsInsecure }, usesTLS, tlsNote},
	{"arrivals", func(f *runFlags) bool { return f.arrivals != "constant" }, openLoop, rateNote},
	{"metrics-linger", func(f *runFlags) bool { return f.metricsLinger > 0 },
		func(f *runFlags, _ matrixUse) bool { return f.metricsAddr != "" }, "--metrics-addr (the endpoint it keeps up after the run)"},
	{"max-clients", func(f *runFlags) bool { return f.maxClients != 0 }, openLoop, rateNote},
	{"drop-after", func(f *runFlags) bool { return false }, openLoop, rateNote},
	{"nodes", func(f *runFlags) bool { return f.nodes != 5 },
		func(_ *runFlags, m matrixUse) bool { return m.startsMasters() },
		"a strategy on several masters (redlock) on servers lockbench starts (with --addr the addresses are the masters; with --topology masters:N, N is)"},
	{"retry", func(f *runFlags) bool { return false },
		func(_ *runFlags, m matrixUse) bool { return !m.allOwnRetry() },
		"a strategy that lockbench retries (every strategy of this run retries with its lock library's own loop, whose options are its own parameters, or waits in its lock's own queue: lockbench list)"},
	{"topology", func(f *runFlags) bool { return f.topology != "" },
		func(f *runFlags, m matrixUse) bool { return f.addr != "" || m.layoutless() },
		"a strategy without a layout of its own (redlock runs on masters, wait-replicas on a replica)"},
}

const (
	tlsNote  = "TLS (rediss:// --addr URLs, or --tls with --addr)"
	rateNote = "--rate (an open loop; a closed loop has no arrivals)"
)

func usesTLS(_ *runFlags, m matrixUse) bool  { return m.tls }
func openLoop(f *runFlags, _ matrixUse) bool { return rateOpen(f) }

// unusedFlags applies flagRules: a flag given that does not apply to any
// scenario of the matrix would be silently ignored, so the run is refused.
func unusedFlags(f *runFlags, m matrixUse) []error {
	for _, st := range m.strats {
		if !strategies.Known(st) {
			return nil // a misspelt name: its own error says more
		}
	}
	var errs []error
	for _, r := range flagRules {
		if (f.changed[r.flag] || r.given(f)) && !r.applies(f, m) {
			errs = append(errs, fmt.Errorf("--%s goes with %s; drop it, or add what it goes with", r.flag, r.with))
		}
	}
	errs = append(errs, addrUse(f, m)...)
	return errs
}

// addrUse refuses --addr lists that cannot be meant: a server named twice
// where each address is a server of its own (redlock's masters: one
// server named three times is no quorum of three), and more servers than
// any scenario uses.
func addrUse(f *runFlags, m matrixUse) []error {
	if len(m.addrs) < 2 || f.cluster || f.sentinelMaster != "" {
		return nil // Cluster seeds and Sentinels may repeat; one server is always used
	}
	var errs []error
	seen := map[string]bool{}
	for _, a := range m.addrs {
		k := strings.ToLower(a)
		if seen[k] {
			errs = append(errs, fmt.Errorf("--addr names %s more than once; each address must be a server of its own (redlock's quorum counts servers): give each once", a))
			break
		}
		seen[k] = true
	}
	masters := slices.ContainsFunc(m.strats, func(st string) bool { return strategies.TopologyOf(st) == strategies.Masters })
	if !masters {
		errs = append(errs, fmt.Errorf("--addr gives %d servers, but the scenarios of this run use one (the first): give one address, or --cluster or --sentinel-master for a Cluster or Sentinels, or a strategy on several masters (redlock)", len(m.addrs)))
	}
	return errs
}

// changedFlags names the flags of fs that are set (on the command line,
// or by a scenario file once applied).
func changedFlags(fs *pflag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.Visit(func(fl *pflag.Flag) { m[fl.Name] = true })
	return m
}

// commandLinePassword names the flag that put a password on the command
// line (where every local user sees it in ps), or "".
func commandLinePassword(cli map[string]bool, f *runFlags) string {
	switch {
	case cli["password"] && f.password != "":
		return "--password"
	case cli["sentinel-password"] && f.sentinelPassword != "":
		return "--sentinel-password"
	}
	if cli["addr"] {
		for _, raw := range splitList(f.addr) {
			if u, err := parseAddr(raw); err == nil && u.password != "" {
				return "a password in an --addr URL"
			}
		}
	}
	if u, err := parseAddr(f.resourceAddr); cli["resource-addr"] && err == nil && u.password != "" {
		return "a password in the --resource-addr URL"
	}
	return ""
}

// warnPassword warns on stderr about a password given on the command
// line.
func warnPassword(w io.Writer, what string) {
	if what != "" {
		fmt.Fprintf(w, "lockbench: warning: %s on the command line is visible to every local user (ps, /proc); use --password-file FILE or $LOCKBENCH_PASSWORD instead\n", what)
	}
}

// rateOpen reports whether --rate makes an open loop: a constant above 0
// or a shape (a --rate that does not parse is refused on its own, by
// parseRate).
func rateOpen(f *runFlags) bool {
	r, err := strconv.ParseFloat(strings.TrimSpace(f.rateSpec), 64)
	return err != nil || r > 0
}

// warnPollingQueue writes a note for each scenario of a strategy whose
// waiters queue in Redis (strategies.Info.WaitQueue: fair) run with a
// polling retry policy (one that waits between attempts): its release wakes the queue's head only under
// pubsub or csc; otherwise a free lock waits for the head's next attempt,
// so ops/s stay far below the ceiling (fair at 10 clients: fixed 10 ops/s,
// backoff 8, against pubsub's 692; docs/strategies.md). The combination
// is allowed: it is the cost being measured.
func warnPollingQueue(w io.Writer, scenarios []engine.Scenario) {
	seen := map[string]bool{}
	for _, sc := range scenarios {
		if sc.Retry == nil || sc.Retry.NeedsNotifier() || sc.Retry.NeedsTracking() || !strategies.InfoOf(sc.Strategy).WaitQueue {
			continue
		}
		if d, ok := sc.Retry.New(rand.New(rand.NewPCG(1, 1))).Next(1); !ok || d == 0 {
			continue // none gives up, spin retries at once: neither waits
		}
		if k := sc.Strategy + "/" + sc.Retry.Name; !seen[k] {
			seen[k] = true
			fmt.Fprintf(w, "note: %s with retry %s: %s's release wakes the head of its queue only under --retry pubsub or csc; %s polls, so a free lock waits for the head's next attempt (ops/s far below the ceiling: a cost measured, not a fault)\n",
				sc.Strategy, sc.Retry.Name, sc.Strategy, sc.Retry.Name)
		}
	}
}
