package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/registry"
)

type runFlags struct {
	strategies, drivers, workloads, retries string
	clients                                 int
	clientShape                             *arrival.Shape // --clients ramp:..., stages:... (clientsValue); clients is its maximum
	duration, warmup                        time.Duration
	ttl                                     string
	acquireTimeout                          time.Duration
	work                                    string
	think                                   string // --think: a client's think time between operations
	background                              string // --background: non-lock traffic on the lock's servers
	mix                                     string // --mix: client roles
	addr, password                          string
	out                                     string
	force                                   bool // --force: overwrite an existing --out
	seed                                    uint64
	quiet                                   bool
	nodes                                   int
	guard                                   string
	resource, resourceAddr                  string // --resource, --resource-addr
	allowNonempty, keepKeys                 bool
	faults                                  []string
	topology                                string
	rateSpec                                string // --rate: a constant or an arrival shape (parseRate)
	repeat                                  int
	format                                  string
	columns                                 string // --columns: the table's columns (printResults)
	metricsAddr                             string
	metricsLinger                           time.Duration
	arrivals                                string
	maxClients                              int
	dropAfter                               time.Duration
	token                                   string
	release                                 string
	livenessInterval, errorStreak           time.Duration
	verifyAcquire                           int
	loadSample                              time.Duration
	interval                                time.Duration // --interval: the timeline's entries
	history                                 string        // --history: this process's critical-section history
	// Redis driver settings: --pool-size, --dial-timeout, --read-timeout,
	// --write-timeout (0 = the default).
	poolSize                               int
	dialTimeout, readTimeout, writeTimeout time.Duration
	backend                                string
	failOn                                 []string // --fail-on thresholds
	// External servers (--addr): ACL user, TLS, Cluster, Sentinel.
	username               string
	tls, tlsInsecure       bool
	tlsCA, tlsCert, tlsKey string
	tlsServerName          string
	cluster                bool
	sentinelMaster         string
	sentinelPassword       string
	// --password-file, --sentinel-password-file: the password on the
	// file's first line, out of ps.
	passwordFile, sentinelPasswordFile string
	file                               string // -f scenario file
	testSlowdown                       string // STRATEGY=D: see engine.Scenario.Slowdown
	// plugin holds the values of the strategies' and workloads' own
	// parameters (one generated flag each), defaults included; pluginSet
	// names those the command line or the scenario file set.
	plugin    registry.Values
	pluginSet map[string]bool
	// changed names the flags the command line or the scenario file set,
	// cli those of the command line alone (nil when validate is called
	// on flags parsed by hand: then only values other than the defaults
	// count as given).
	changed, cli map[string]bool
	// sweep: lockbench sweep, whose --clients (clientList) is a list of
	// counts (parseClientList), each a scenario of every matrix cell.
	sweep      bool
	clientList string
	// Execution segments (segments.go): --segment i/N (or
	// LOCKBENCH_SEGMENT), --segment-count N with JOB_COMPLETION_INDEX,
	// --run-id, --barrier-timeout; --procs N runs N segments as child
	// processes.
	segment        string
	segmentCount   int
	runID          string
	barrierTimeout time.Duration
	procs          int
}

// maxClients bounds --clients (and --max-clients): a client costs a few
// KB (its goroutine, its counters and a buffer of values for histograms
// it shares with other clients: metrics.Set).
const maxClients = 100_000

// connFlags declares the flags that say how to reach the user's servers,
// shared by run and clean: --addr, the login, TLS, Cluster, Sentinel
// (parseConn reads them).
func connFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&f.addr, "addr", "", "use these Redis servers instead of starting redis-server: host:port[,...] or redis://[user:password@]host:port[/db] (rediss:// for TLS)")
	fl.StringVar(&f.password, "password", "", "password for --addr servers (visible in ps: prefer --password-file or $LOCKBENCH_PASSWORD)")
	fl.StringVar(&f.passwordFile, "password-file", "", "read the password for --addr servers from the first line of this file")
	fl.StringVar(&f.username, "username", "", "ACL user for --addr servers (AUTH username password; default: the default user)")
	fl.BoolVar(&f.tls, "tls", false, "connect to host:port --addr servers over TLS (rediss:// addresses imply it)")
	fl.StringVar(&f.tlsCA, "tls-ca-file", "", "TLS: PEM file of the CA(s) that signed the servers' certificates (default: the system's)")
	fl.StringVar(&f.tlsCert, "tls-cert-file", "", "TLS: client certificate (PEM), for servers with tls-auth-clients; with --tls-key-file")
	fl.StringVar(&f.tlsKey, "tls-key-file", "", "TLS: the client certificate's private key (PEM)")
	fl.StringVar(&f.tlsServerName, "tls-server-name", "", "TLS: the name the servers' certificates must carry (default: each address's host)")
	fl.BoolVar(&f.tlsInsecure, "tls-insecure-skip-verify", false, "TLS: accept any server certificate (test servers only: anyone in the middle can read and change the traffic)")
	fl.BoolVar(&f.cluster, "cluster", false, "the --addr servers are nodes of a Redis Cluster (seeds; the client finds the rest)")
	fl.StringVar(&f.sentinelMaster, "sentinel-master", "", "the --addr servers are Sentinels: run on the master they know as NAME, following failovers")
	fl.StringVar(&f.sentinelPassword, "sentinel-password", "", "with --sentinel-master: the Sentinels' own password (--password is the master's)")
	fl.StringVar(&f.sentinelPasswordFile, "sentinel-password-file", "", "with --sentinel-master: read the Sentinels' own password from the first line of this file")
}

// listAnnotation marks a flag that takes a comma list although its type is
// a plain string (sweep's --clients): a scenario file may give it as a
// YAML list.
const listAnnotation = "lockbench-list"

// isListFlag reports whether fl takes a comma list (listFlags, or marked
// with listAnnotation).
func isListFlag(fl *pflag.Flag) bool {
	return listFlags[fl.Name] || len(fl.Annotations[listAnnotation]) > 0
}

// listFlags take comma-separated lists on the command line; in a scenario
// file they may also be YAML lists. Repeatable flags (--fault) take a YAML
// list as one value per item.
var listFlags = map[string]bool{"strategy": true, "driver": true, "workload": true, "retry": true, "addr": true}
