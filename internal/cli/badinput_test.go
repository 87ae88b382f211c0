package cli

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
)

// badCase is one bad input to the command line: the arguments (with
// {dir}, {redis}, {pwfile} and {busy} replaced), an optional scenario
// file (written to {dir}/case-N.yaml and given with -f), the exit code and
// a phrase stderr must hold.
type badCase struct {
	args []string
	file string
	code int
	want string
	// server: the case needs the redis-server the table starts ({redis},
	// {pwfile}); the other cases run with no redis-server on PATH, so a
	// case that started one would fail with exit 1, not be refused.
	server bool
}

// badInputCases is the table of inputs lockbench refuses. Every case is
// refused before any server starts, except those marked server, which use
// the one server of the table.
var badInputCases = []badCase{
	// Meaningless setups (issue #18, part 5).
	{args: []string{"run", "--strategy", "redlock", "--addr", "127.0.0.1:1,127.0.0.1:1,127.0.0.1:2"}, code: 2, want: "--addr names 127.0.0.1:1 more than once"},
	{args: []string{"run", "--strategy", "redlock", "--addr", "127.0.0.1:1,127.0.0.1:1,127.0.0.1:1"}, code: 2, want: "give each once"},
	{args: []string{"run", "--strategy", "atomic", "--addr", "127.0.0.1:1,127.0.0.1:2"}, code: 2, want: "--addr gives 2 servers, but the scenarios of this run use one"},
	{args: []string{"run", "--addr", "{redis}", "--password-file", "{pwfile}", "--cluster", "--strategy", "atomic", "--driver", "goredis"}, code: 2, want: "is not a Cluster node (INFO cluster: cluster_enabled:0", server: true},
	{args: []string{"run", "--addr", "{redis}", "--password-file", "{pwfile}", "--cluster", "--strategy", "atomic", "--driver", "rueidis"}, code: 2, want: "drop --cluster", server: true},
	{args: []string{"run", "--nested-second"}, code: 2, want: "--nested-second goes with nested"},
	{args: []string{"run", "--allow-nonempty"}, code: 2, want: "--allow-nonempty goes with --addr"},
	// A separate resource (--resource, --resource-addr).
	{args: []string{"run", "--resource", "elsewhere"}, code: 2, want: `--resource "elsewhere" is not lock or separate`},
	{args: []string{"run", "--addr", "127.0.0.1:1", "--resource-addr", "127.0.0.1:2"}, code: 2, want: "--resource-addr goes with --addr and --resource separate"},
	{args: []string{"run", "--resource", "separate", "--resource-addr", "127.0.0.1:2"}, code: 2, want: "--resource-addr goes with --addr and --resource separate"},
	{args: []string{"run", "--resource", "separate", "--addr", "127.0.0.1:1"}, code: 2, want: "--resource separate with --addr needs --resource-addr"},
	{args: []string{"run", "--resource", "separate", "--addr", "127.0.0.1:1", "--resource-addr", "127.0.0.1:0"}, code: 2, want: "--resource-addr \"127.0.0.1:0\": want host:port"},
	{args: []string{"run", "--resource", "separate", "--addr", "127.0.0.1:1", "--resource-addr", "127.0.0.1:1"}, code: 2, want: "--resource-addr 127.0.0.1:1 is one of --addr's servers"},
	{args: []string{"run", "--resource", "separate", "--addr", "redis://127.0.0.1:1/2", "--resource-addr", "redis://127.0.0.1:1/3"}, code: 2, want: "--resource-addr 127.0.0.1:1 is one of --addr's servers"},
	{args: []string{"run", "--resource", "separate", "--workload", "lock-cycle"}, code: 2, want: "--resource separate: workload lock-cycle writes no protected data"},
	{args: []string{"run", "--resource", "separate", "--strategy", "sql-rowlock"}, code: 2, want: "--resource separate: sql-rowlock keeps its data in MariaDB rows"},
	{args: []string{"run", "--resource", "separate", "--backend", "docker"}, code: 2, want: "it needs --backend local"},
	{args: []string{"run", "--resource", "separate", "--procs", "2"}, code: 2, want: "--resource separate runs in one process"},
	{args: []string{"run", "--strategy", "redsync,redislock", "--retry", "backoff"}, code: 2, want: "--retry goes with a strategy that lockbench retries"},
	{args: []string{"run", "--strategy", "rueidislock", "--driver", "goredis"}, code: 2, want: "strategy rueidislock runs on the rueidis driver only, and --driver is goredis: add --driver rueidis"},
	{args: []string{"run", "--strategy", "atomic", "--retry", "csc", "--driver", "goredis"}, code: 2, want: "retry csc runs on the rueidis driver only, and --driver is goredis: add --driver rueidis"},
	{args: []string{"run", "--strategy", "atomic", "--retry", "csc:max=-1s", "--driver", "rueidis"}, code: 2, want: "max"},
	{args: []string{"run", "--addr", "127.0.0.1:1", "--sentinel-password", "p"}, code: 2, want: "--sentinel-password goes with --sentinel-master"},
	{args: []string{"run", "--addr", "127.0.0.1:1", "--sentinel-password-file", "{dir}/pw"}, code: 2, want: "--sentinel-password-file goes with --sentinel-master"},
	{args: []string{"run", "--tls-ca-file", "ca.pem"}, code: 2, want: "--tls-ca-file goes with TLS"},
	{args: []string{"run", "--tls-insecure-skip-verify"}, code: 2, want: "--tls-insecure-skip-verify goes with TLS"},
	{args: []string{"run", "--addr", "127.0.0.1:1", "--tls-server-name", "redis.example"}, code: 2, want: "--tls-server-name goes with TLS"},
	{args: []string{"run", "--tls"}, code: 2, want: "--tls goes with --addr"},
	{args: []string{"run", "--arrivals", "poisson"}, code: 2, want: "--arrivals goes with --rate"},
	{args: []string{"run", "--max-clients", "10"}, code: 2, want: "--max-clients goes with --rate"},
	{args: []string{"run", "--drop-after", "1s"}, code: 2, want: "--drop-after goes with --rate"},
	{args: []string{"run", "--nodes", "3"}, code: 2, want: "--nodes goes with a strategy on several masters"},
	{args: []string{"run", "--strategy", "redlock", "--addr", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", "--nodes", "3"}, code: 2, want: "--nodes goes with"},
	{args: []string{"run", "--strategy", "redlock", "--topology", "masters:3", "--nodes", "4"}, code: 2, want: "--nodes goes with"},
	{args: []string{"run", "--strategy", "redlock", "--topology", "replica"}, code: 2, want: "--topology goes with a strategy without a layout of its own"},
	{args: []string{"run", "--password", "x"}, code: 2, want: "--password goes with --addr"},
	{args: []string{"run", "--password-file", "{dir}/pw"}, code: 2, want: "--password-file goes with --addr"},
	{args: []string{"run", "--username", "u"}, code: 2, want: "--username goes with --addr"},
	{args: []string{"run", "--cluster"}, code: 2, want: "--cluster goes with --addr"},
	{args: []string{"run", "--segments", "4"}, code: 2, want: "--segments goes with segmented"},
	{args: []string{"run", "--extend", "on"}, code: 2, want: "--extend goes with ext-atomic, python-redis-lock, python-redis-lock-renew, redis-py-lock, redislock, redlock, redlock-node, redlock-node-quorum, redsync, redsync-redlock"},
	{args: []string{"run", "--workload", "hot-key", "--stock", "5"}, code: 2, want: "--stock goes with flash-sale"},
	{args: []string{"run", "--on-timeout", "release", "--strategy", "naive"}, code: 2, want: "--on-timeout goes with atomic, watchdog"},
	// A write guard where it has no meaning (issue #19, item 4).
	{args: []string{"run", "--workload", "hot-key", "--guard", "decr"}, code: 2, want: "--guard decr: workload hot-key has no write it applies to; decr runs in flash-sale"},
	{args: []string{"run", "--workload", "flash-sale,long-task", "--guard", "decr"}, code: 2, want: "workload long-task has no write it applies to; decr runs in flash-sale"},
	{args: []string{"run", "--workload", "lock-cycle", "--guard", "cas"}, code: 2, want: "cas runs in flash-sale, hot-key, long-task, nested"},
	{args: []string{"run", "--metrics-addr", "127.0.0.1:99999"}, code: 2, want: "--metrics-addr \"127.0.0.1:99999\": the port must be a number"},
	{args: []string{"run", "--metrics-addr", "garbage"}, code: 2, want: "want [host]:port"},
	{args: []string{"run", "--metrics-addr", "{busy}", "--strategy", "atomic", "--driver", "goredis"}, code: 2, want: "address already in use"},
	{args: []string{"run", "--metrics-linger", "5s"}, code: 2, want: "--metrics-linger goes with --metrics-addr"},
	{args: []string{"run", "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "-1s"}, code: 2, want: "--metrics-linger must be from 0 to 24h, got -1s"},
	// Scenario files: a wrong type is refused even when the command line
	// gives the flag too.
	{args: []string{"run", "--clients", "5"}, file: "clients: \"ten\"\n", code: 2, want: `clients: invalid argument "ten"`},
	{args: []string{"run"}, file: "stock: 1.5\n", code: 2, want: `"1.5" is not a whole number`},
	{args: []string{"run", "--stock", "5"}, file: "stock: 1.5\n", code: 2, want: `"1.5" is not a whole number`},
	{args: []string{"run"}, file: "fault: 3\n", code: 2, want: "fault: want NAME[:param=value,...], not the number 3"},
	{args: []string{"run", "--fault", "pause"}, file: "fault: [pause, 3]\n", code: 2, want: "not the number 3"},
	{args: []string{"run"}, file: "strategy: true\n", code: 2, want: "strategy: want strategy names, not the boolean true"},
	{args: []string{"run"}, file: "duration: 30\n", code: 2, want: "missing unit"},
	{args: []string{"run"}, file: "nodes: 3\n", code: 2, want: "--nodes goes with"},
	{args: []string{"run"}, file: "allow-nonempty: true\n", code: 2, want: "--allow-nonempty goes with --addr"},
	{args: []string{"run"}, file: "quiet: maybe\n", code: 2, want: "quiet:"},
	{args: []string{"run"}, file: "cliens: 4\n", code: 2, want: `did you mean "clients"?`},
	{args: []string{"run", "-f", "{dir}/none.yaml"}, code: 2, want: "none.yaml: no such file"},
	// Numbers and durations out of range.
	{args: []string{"run", "--clients", "0"}, code: 2, want: "--clients must be from 1 to 100000, got 0"},
	{args: []string{"run", "--clients", "-1"}, code: 2, want: "--clients must be from 1"},
	{args: []string{"run", "--clients", "99999999999999999999"}, code: 2, want: "value out of range"},
	{args: []string{"run", "--duration", "-1s"}, code: 2, want: "--duration must be > 0"},
	{args: []string{"run", "--duration", "25h"}, code: 2, want: "at most 24h"},
	{args: []string{"run", "--duration", "5"}, code: 2, want: "missing unit"},
	{args: []string{"run", "--warmup", "-1s"}, code: 2, want: "--warmup must be from 0"},
	{args: []string{"run", "--ttl", "0ms"}, code: 2, want: "--ttl must be at least 1ms"},
	{args: []string{"run", "--ttl", "soon"}, code: 2, want: "is not a duration"},
	{args: []string{"run", "--work", "-1ms"}, code: 2, want: "is negative"},
	{args: []string{"run", "--work", "lognormal:median=5ms"}, code: 2, want: "give both median=D and p99=D"},
	{args: []string{"run", "--repeat", "0"}, code: 2, want: "--repeat must be from 1 to 1000"},
	{args: []string{"run", "--rate", "-1"}, code: 2, want: "--rate must be from 0"},
	{args: []string{"run", "--rate", "1e9"}, code: 2, want: "--rate must be from 0"},
	// Arrival shapes (--rate; stages: in a scenario file).
	{args: []string{"run", "--rate", "ramp:from=10,to=100"}, code: 2, want: "ramp: over missing: want ramp:from=R1,to=R2,over=D"},
	{args: []string{"run", "--rate", "ramp:from=-10,to=100,over=5s"}, code: 2, want: "from=-10: a rate cannot be negative"},
	{args: []string{"run", "--rate", "ramp:from=10,to=100,over=5s,by=2"}, code: 2, want: `unknown key "by" (keys: from, to, over)`},
	{args: []string{"run", "--rate", "sine:mean=100,amp=150,period=10s"}, code: 2, want: "amp=150 is above mean=100"},
	{args: []string{"run", "--rate", "sine:mean=100,amp=50,period=0s"}, code: 2, want: "period=0s: want a duration above 0"},
	{args: []string{"run", "--rate", "stages:30s=100,1m=-5"}, code: 2, want: "target=-5: a rate cannot be negative"},
	{args: []string{"run", "--rate", "square:low=1,high=2"}, code: 2, want: `unknown shape "square"`},
	{args: []string{"run", "--rate", "fast"}, code: 2, want: `--rate "fast": want a rate in ops/s`},
	{args: []string{"run", "--rate", "stages:1s=100,1s=0", "--warmup", "3s", "--duration", "1s"}, code: 2, want: "no arrival is due in the measured window"},
	{args: []string{"run"}, file: "stages:\n  - {duration: 1s, target: 10}\n  - {duration: 1s, rate: 10}\n", code: 2, want: `.yaml:3: stages: unknown key "rate" in a stage (keys: duration, target)`},
	{args: []string{"run"}, file: "stages:\n  - {duration: 30, target: 10}\n", code: 2, want: "stages: duration: want a duration with its unit (30s, 1m), not the number 30"},
	{args: []string{"run"}, file: "stages:\n  - {duration: 1s}\n", code: 2, want: "a stage needs both duration and target"},
	{args: []string{"run"}, file: "rate: 100\nstages:\n  - {duration: 1s, target: 10}\n", code: 2, want: "stages and rate both set the arrival rate"},
	{args: []string{"run"}, file: "start-rate: 10\n", code: 2, want: "start-rate goes with stages"},
	{args: []string{"run"}, file: "stages: 100\n", code: 2, want: "stages: want a list of {duration: D, target: R}"},
	{args: []string{"run"}, file: "stages:\n  - {duration: 1s, target: -3}\n", code: 2, want: "target=-3: a rate cannot be negative"},
	{args: []string{"run", "--pool-size", "-1"}, code: 2, want: "--pool-size must be >= 0"},
	{args: []string{"run", "--read-timeout", "-1s"}, code: 2, want: "--read-timeout must be >= 0"},
	{args: []string{"run", "--acquire-timeout", "-1s"}, code: 2, want: "--acquire-timeout"},
	{args: []string{"run", "--liveness-interval", "-1s"}, code: 2, want: "--liveness-interval must be 0 (off) or from 1ms"},
	{args: []string{"run", "--error-streak", "-1s"}, code: 2, want: "--error-streak must be >= 0"},
	{args: []string{"run", "--load-sample", "10us"}, code: 2, want: "--load-sample"},
	{args: []string{"run", "--seed", "-1"}, code: 2, want: `invalid argument "-1" for "--seed"`},
	{args: []string{"run", "--skus", "0"}, code: 2, want: "--skus 0: must be from 1"},
	{args: []string{"run", "--workload", "hot-key", "--keys", "0"}, code: 2, want: "--keys 0: must be from 1"},
	{args: []string{"run", "--workload", "hot-key", "--zipf", "0.5"}, code: 2, want: "--zipf 0.5"},
	{args: []string{"run", "--read-ratio", "2"}, code: 2, want: "--read-ratio 2: must be from 0 to 1"},
	{args: []string{"run", "--topology", "masters:65"}, code: 2, want: "want masters:N with N from 1 to 64"},
	// Unknown names.
	{args: []string{"run", "--strategy", "nope"}, code: 2, want: `unknown strategy "nope"`},
	{args: []string{"run", "--workload", "nope"}, code: 2, want: `unknown workload "nope"`},
	{args: []string{"run", "--driver", "nope"}, code: 2, want: `unknown driver "nope"`},
	{args: []string{"run", "--retry", "sometimes"}, code: 2, want: `unknown retry policy "sometimes"`},
	{args: []string{"run", "--fault", "nope"}, code: 2, want: `unknown fault "nope"`},
	{args: []string{"run", "--format", "yaml"}, code: 2, want: "--format"},
	{args: []string{"run", "--token", "fixed"}, code: 2, want: `--token "fixed" is not random or constant`},
	{args: []string{"run", "--release", "later"}, code: 2, want: "--release must be detached or caller"},
	{args: []string{"run", "--think", "bogus"}, code: 2, want: `--think: "bogus" is not a duration`},
	{args: []string{"run", "--think", "exp:mean=-1s"}, code: 2, want: `--think: "exp:mean=-1s": want mean > 0`},
	{args: []string{"run", "--think", "20ms", "--rate", "100"}, code: 2, want: "--think goes with a closed loop"},
	{args: []string{"run", "--background", "get=fast"}, code: 2, want: "--background: get=fast: want a rate like 2000/s"},
	{args: []string{"run", "--background", "flush=1/s"}, code: 2, want: `--background: "flush" is not a command it sends`},
	{args: []string{"run", "--backend", "podman"}, code: 2, want: `--backend "podman" is not local or docker`},
	{args: []string{"run", "--topology", "ring"}, code: 2, want: `--topology "ring" is not one of`},
	// Parameters scoped to one strategy or workload (NAME:param=value).
	{args: []string{"run", "--strategy", "redlock,redsync", "--extend", "unchecked"}, code: 2, want: `--extend unchecked: strategy redsync: "unchecked" is not one of off, on (a value for redsync alone: --strategy redsync:extend=VALUE)`},
	{args: []string{"run", "--strategy", "redlock:extend=bogus,redsync:extend=on"}, code: 2, want: `strategy redlock: extend=bogus: "bogus" is not one of off, on, unchecked`},
	{args: []string{"run", "--strategy", "atomic:extend=on"}, code: 2, want: `strategy atomic: unknown parameter "extend" (it takes on-timeout)`},
	{args: []string{"run", "--strategy", "redlock:extend=on,redlock:extend=unchecked"}, code: 2, want: "--strategy lists redlock twice"},
	{args: []string{"run", "--workload", "hot-key:keys=0"}, code: 2, want: "workload hot-key: keys=0: must be from 1"},
	{args: []string{"run"}, file: "strategy: [redlock:extend=unchecked, redsync:extnd=on]\n", code: 2, want: `strategy redsync: unknown parameter "extnd"`},
	// Retry and fault parameters, every fault.
	{args: []string{"run", "--retry", "backoff:tries=0"}, code: 2, want: "tries=0: must be at least 1"},
	{args: []string{"run", "--retry", "fixed:interval=-1ms"}, code: 2, want: "interval=-1ms: must be > 0"},
	{args: []string{"run", "--fault", "reply-loss:p=2"}, code: 2, want: "fault reply-loss: p=2: must be from 0 to 1"},
	{args: []string{"run", "--fault", "reply-loss:delay=-1s"}, code: 2, want: "fault reply-loss: delay=-1s"},
	{args: []string{"run", "--fault", "blackhole:for=-1s"}, code: 2, want: "fault blackhole: for=-1s"},
	{args: []string{"run", "--fault", "blackhole:node=5"}, code: 2, want: "fault blackhole: node=5"},
	{args: []string{"run", "--fault", "blackhole:after=-3"}, code: 2, want: "after=-3: must be at least 0"},
	{args: []string{"run", "--fault", "script-flush:every=-1s"}, code: 2, want: "fault script-flush: every=-1s"},
	{args: []string{"run", "--fault", "client-pause:mode=xx"}, code: 2, want: `fault client-pause: mode=xx: "xx" is not one of write, all`},
	{args: []string{"run", "--fault", "clock-jump:count=0"}, code: 2, want: "fault clock-jump: count=0: must be from 1 to 64"},
	{args: []string{"run", "--fault", "clock-jump:by=-1s"}, code: 2, want: "fault clock-jump: by=-1s"},
	{args: []string{"run", "--fault", "cancel:p=1.5"}, code: 2, want: "fault cancel: p=1.5"},
	{args: []string{"run", "--fault", "cancel:p=abc"}, code: 2, want: `"abc" is not a finite number`},
	{args: []string{"run", "--fault", "pause:at=1s,after=5"}, code: 2, want: "give at= or after=, not both"},
	{args: []string{"run", "--fault", "pause:point=middle"}, code: 2, want: `"middle" is not one of work, write`},
	{args: []string{"run", "--fault", "pause:at"}, code: 2, want: `parameter "at" is not key=value`},
	{args: []string{"run", "--fault", "pause:bogus=1"}, code: 2, want: `unknown parameter "bogus"`},
	{args: []string{"run", "--fault", "latency:jitter=1h"}, code: 2, want: "exceeds delay"},
	{args: []string{"run", "--fault", "node-kill:node=-1"}, code: 2, want: "is not a server index"},
	{args: []string{"run", "--fault", "node-kill", "--addr", "127.0.0.1:1"}, code: 2, want: "cannot be used with --addr"},
	// --fail-on.
	{args: []string{"run", "--fail-on", "p99<50"}, code: 2, want: `unknown metric "p99"; did you mean "p99_ms"?`},
	{args: []string{"run", "--fail-on", "ops_per_sec>fast"}, code: 2, want: `value "fast" is not a finite number`},
	{args: []string{"run", "--fail-on", ""}, code: 2, want: "empty threshold"},
	{args: []string{"run", "--fail-on", "redlock/*:safety"}, code: 2, want: `scope "redlock/*" matches no scenario`},
	// Addresses, passwords, conflicting flags.
	// Issue 38, item 6: --addr '' is refused (it started local servers);
	// a multi-document scenario file is refused (only its first was
	// used); a long value is cut in the message (and the suggestion skips
	// it: a 10 MB value took 15 s).
	{args: []string{"run", "--addr", ""}, code: 2, want: `--addr "" gives no server: give host:port or a redis:// URL, or drop --addr`},
	{args: []string{"run", "--addr", " , "}, code: 2, want: `--addr " , " gives no server`},
	{args: []string{"run"}, file: "strategy: atomic\n---\nstrategy: naive\n", code: 2, want: "has 2 YAML documents (separated by ---); lockbench reads one"},
	{args: []string{"run"}, file: "strategy: " + strings.Repeat("a", 100000) + "\n", code: 2, want: `unknown strategy "` + strings.Repeat("a", 199) + "…(100002 bytes) (valid: "},
	{args: []string{"run", "--workload", strings.Repeat("b", 1000)}, code: 2, want: "…(1002 bytes)"},
	{args: []string{"run", "--addr", "localhost"}, code: 2, want: "want host:port"},
	{args: []string{"run", "--addr", "127.0.0.1:70000"}, code: 2, want: "the port must be a number from 1 to 65535"},
	{args: []string{"run", "--addr", "127.0.0.1:1", "--cluster", "--sentinel-master", "m"}, code: 2, want: "exclude each other"},
	{args: []string{"run", "--addr", "127.0.0.1:1", "--password", "a", "--password-file", "{dir}/pw"}, code: 2, want: "--password and --password-file both give the password"},
	{args: []string{"run", "--addr", "127.0.0.1:1", "--password-file", "{dir}/none"}, code: 2, want: "--password-file: {dir}/none: no such file"},
	{args: []string{"run", "--addr", "127.0.0.1:1", "--password-file", "{dir}/empty"}, code: 2, want: "the first line is empty"},
	{args: []string{"run", "--addr", "127.0.0.1:1", "--sentinel-master", "m", "--sentinel-password-file", "{dir}/empty"}, code: 2, want: "--sentinel-password-file: {dir}/empty: the first line is empty"},
	{args: []string{"run", "--backend", "docker", "--addr", "127.0.0.1:1"}, code: 2, want: "--backend docker starts servers"},
	{args: []string{"run", "--topology", "cluster", "--addr", "127.0.0.1:1"}, code: 2, want: "--topology starts servers"},
	{args: []string{"run", "--out", "{dir}/r.txt"}, code: 2, want: "must end in .json"},
	{args: []string{"run", "--no-such-flag"}, code: 2, want: "unknown flag: --no-such-flag"},
	{args: []string{"run", "extra"}, code: 2, want: "unknown command"},
	// compare, merge, report: a bad flag, a missing file, a bad value, a
	// damaged file.
	{args: []string{"compare", "{dir}/good.json"}, code: 2, want: "accepts 2 arg(s)"},
	{args: []string{"compare", "{dir}/good.json", "{dir}/none.json"}, code: 2, want: "{dir}/none.json: no such file"},
	{args: []string{"compare", "{dir}/good.json", "{dir}/notjson.json"}, code: 2, want: "{dir}/notjson.json: invalid character"},
	{args: []string{"compare", "{dir}/good.json", "{dir}/badhist.json"}, code: 2, want: "{dir}/badhist.json: scenario 1 (atomic/rueidis/flash-sale/fixed): latency_hist is not a histogram"},
	{args: []string{"compare", "{dir}/good.json", "{dir}/good.json", "--threshold", "lots"}, code: 2, want: `"lots" is not a percentage`},
	{args: []string{"compare", "{dir}/good.json", "{dir}/good.json", "--bogus"}, code: 2, want: "unknown flag: --bogus"},
	{args: []string{"merge", "{dir}/good.json"}, code: 2, want: "requires at least 2 arg(s)"},
	{args: []string{"merge", "{dir}/good.json", "{dir}/none.json", "--out", "{dir}/m.json"}, code: 2, want: "{dir}/none.json: no such file"},
	{args: []string{"merge", "{dir}/good.json", "{dir}/badhist.json", "--out", "{dir}/m.json"}, code: 2, want: "{dir}/badhist.json: scenario 1"},
	{args: []string{"merge", "{dir}/good.json", "{dir}/schema.json", "--out", "{dir}/m.json"}, code: 2, want: "{dir}/schema.json: schema 999"},
	{args: []string{"merge", "{dir}/good.json", "{dir}/good.json", "--out", "{dir}/m.txt"}, code: 2, want: `--out "{dir}/m.txt": must end in .json`},
	{args: []string{"merge", "{dir}/good.json", "{dir}/good.json", "--out", "{dir}/isdir.json"}, code: 2, want: "is a directory"},
	{args: []string{"merge", "{dir}/good.json", "{dir}/good.json", "--out", "{dir}/good.json/m.json"}, code: 2, want: "{dir}/good.json is not a directory"},
	{args: []string{"merge", "{dir}/good.json", "{dir}/good.json", "--bogus"}, code: 2, want: "unknown flag: --bogus"},
	{args: []string{"report"}, code: 2, want: "requires at least 1 arg(s)"},
	{args: []string{"report", "{dir}/none.json"}, code: 2, want: "{dir}/none.json: no such file"},
	{args: []string{"report", "{dir}/badhist.json", "-o", "{dir}/rep"}, code: 2, want: "{dir}/badhist.json: scenario 1"},
	{args: []string{"report", "{dir}/good.json", "-o", "{dir}/good.json"}, code: 2, want: "-o {dir}/good.json: is a file, not a directory"},
	{args: []string{"report", "{dir}/empty.json", "-o", "{dir}/rep"}, code: 2, want: "no scenario to draw"},
	{args: []string{"report", "--bogus"}, code: 2, want: "unknown flag: --bogus"},
	// claims, list, harness, version.
	{args: []string{"claims", "--bogus"}, code: 2, want: "unknown flag: --bogus"},
	{args: []string{"claims", "--only", "X9"}, code: 2, want: "unknown claim id X9"},
	{args: []string{"claims", "--driver", "nope"}, code: 2, want: `unknown driver "nope"`},
	{args: []string{"claims", "--only", "S2", "--out-dir", "{dir}/good.json"}, code: 2, want: "--out-dir {dir}/good.json: is a file, not a directory"},
	{args: []string{"list", "--bogus"}, code: 2, want: "unknown flag: --bogus"},
	{args: []string{"list", "extra"}, code: 2, want: "unknown command"},
	{args: []string{"harness", "--bogus"}, code: 2, want: "unknown flag: --bogus"},
	{args: []string{"harness", "--rounds", "0"}, code: 2, want: "--rounds must be at least 1"},
	{args: []string{"harness", "--clients", "abc"}, code: 2, want: `invalid argument "abc" for "--clients"`},
	{args: []string{"harness", "extra"}, code: 2, want: "unknown command"},
	{args: []string{"version", "--bogus"}, code: 2, want: "unknown flag: --bogus"},
	{args: []string{"version", "extra"}, code: 2, want: "unknown command"},
	{args: []string{"frobnicate"}, code: 2, want: "unknown command"},
	// A write that fails after the checks: exit 1, naming the user's
	// path, never the temporary file.
	{args: []string{"merge", "{dir}/good.json", "{dir}/good.json", "--out", "{dir}/nodir/x/../m.json"}, code: 1, want: "write {dir}/nodir/x/../m.json"},
}

// TestBadInput runs every case of badInputCases on the built binary: the
// exit code, the phrase, no panic or goroutine dump, no temporary file
// named, and nothing started (no redis-server on PATH).
func TestBadInput(t *testing.T) {
	t.Parallel()
	if len(badInputCases) < 60 {
		t.Fatalf("%d cases, want at least 60", len(badInputCases))
	}
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("pw", "secret\n")
	write("empty", "\n")
	write("notjson.json", "{not json")
	write("schema.json", `{"schema": 999}`)
	if err := os.Mkdir(filepath.Join(dir, "isdir.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	sc := report.Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale", Retry: "fixed", Clients: 1, OpsPerSec: 1000,
		Raw: &report.Raw{WindowS: 1, Runs: 1}}
	for name, hist := range map[string]string{"good.json": "", "badhist.json": "not a histogram"} {
		s := sc
		s.LatencyHist = hist
		if err := report.WriteFile(filepath.Join(dir, name), &report.Run{Schema: report.Schema, Scenarios: []report.Scenario{s}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := report.WriteFile(filepath.Join(dir, "empty.json"), &report.Run{Schema: report.Schema, Scenarios: []report.Scenario{}}); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	noServers := t.TempDir() // PATH for the cases refused before any server starts

	var redisAddr, pwfile string
	startServer := func() {
		if redisAddr != "" {
			return
		}
		if _, err := exec.LookPath("redis-server"); err != nil {
			t.Skip("redis-server not on PATH")
		}
		topo, err := topology.Start(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(topo.Stop)
		redisAddr = topo.Servers[0].Addr
		pwfile = filepath.Join(dir, "redis-pw")
		write("redis-pw", topo.Servers[0].Password+"\n")
	}

	for i, c := range badInputCases {
		if c.server {
			startServer()
		}
		sub := func(s string) string {
			return strings.NewReplacer("{dir}", dir, "{redis}", redisAddr, "{pwfile}", pwfile, "{busy}", busy.Addr().String()).Replace(s)
		}
		var args []string
		for _, a := range c.args {
			args = append(args, sub(a))
		}
		if args[0] == "run" && !hasFlag(args, "--out") {
			args = append(args, "--out", filepath.Join(dir, "never.json"))
		}
		if c.file != "" {
			path := filepath.Join(dir, "case-"+strconv.Itoa(i)+".yaml")
			write(filepath.Base(path), c.file)
			args = append(args, "-f", path)
		}
		cmd := exec.Command(bin, args...)
		env := []string{"HOME=" + dir}
		if c.server {
			env = append(env, "PATH="+os.Getenv("PATH"))
		} else {
			env = append(env, "PATH="+noServers)
		}
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		msg := stderr.String()
		want := sub(c.want)
		switch {
		case strings.Contains(msg, "panic:") || strings.Contains(msg, "goroutine "):
			t.Errorf("case %d, lockbench %q panicked:\n%s", i, args, msg)
		case code != c.code:
			t.Errorf("case %d, lockbench %q: exit %d, want %d\n%s", i, args, code, c.code, msg)
		case !strings.Contains(msg, want):
			t.Errorf("case %d, lockbench %q: stderr lacks %q:\n%s", i, args, want, msg)
		case strings.Contains(msg, ".lockbench-") || strings.Contains(msg, ".tmp"):
			t.Errorf("case %d, lockbench %q: the message names a temporary file:\n%s", i, args, msg)
		case strings.Contains(msg, "redis-server not found"):
			t.Errorf("case %d, lockbench %q tried to start a server before refusing:\n%s", i, args, msg)
		}
		if _, err := os.Stat(filepath.Join(dir, "never.json")); err == nil {
			t.Errorf("case %d, lockbench %q wrote a result file", i, args)
			os.Remove(filepath.Join(dir, "never.json"))
		}
	}
}

// A password on the command line is warned about (it shows in ps); one
// from --password-file or $LOCKBENCH_PASSWORD is not.
func TestPasswordWarning(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	s := oneServer(t)
	dir := t.TempDir()
	pwfile := passwordFile(t, dir, s)
	base := []string{"run", "-q", "--addr", s.Addr, "--strategy", "atomic", "--driver", "rueidis", "--clients", "2",
		"--duration", "200ms", "--stock", "1000000", "--force", "--out", filepath.Join(dir, "r.json")}
	const warning = "on the command line is visible to every local user"
	r := lockbench(t, append(base, "--password", s.Password)...)
	if r.code != 0 || !strings.Contains(r.stderr, "--password "+warning) || !strings.Contains(r.stderr, "--password-file") {
		t.Errorf("--password: exit %d, want 0 and a warning naming --password-file:\n%s", r.code, r.stderr)
	}
	r = lockbench(t, append(base, "--password-file", pwfile)...)
	if r.code != 0 || strings.Contains(r.stderr, warning) {
		t.Errorf("--password-file: exit %d, want 0 and no warning:\n%s", r.code, r.stderr)
	}
	cmd := exec.Command(bin, base...)
	cmd.Env = append(os.Environ(), "LOCKBENCH_PASSWORD="+s.Password)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), warning) {
		t.Errorf("$LOCKBENCH_PASSWORD: %v, want exit 0 and no warning:\n%s", err, out)
	}
}

// hasFlag reports whether args give flag.
func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}
