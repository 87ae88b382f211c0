# lockbench — see README.md and docs/. The two commands a fresh machine needs:
#   make run    start redis-server locally and run the default matrix
#   make test   go vet + the test suite (race detector on) against real redis-server

GO      ?= go
BIN     := bin/lockbench
COMMIT  := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/lockbench/lockbench/internal/cli.gitCommit=$(COMMIT)
ARGS    ?=

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2


.PHONY: adapters
.PHONY: all build install run test lint bench bench-gate regress redis servers schema fmt clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/lockbench

# lockbench on PATH: into $(go env GOPATH)/bin (or $GOBIN), commit stamped in.
install:
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/lockbench

# ARGS passes flags through: make run ARGS="--strategy atomic --clients 200"
run: servers build
	./$(BIN) run $(ARGS)

# Test binaries are built in parallel, then the tests run in two lanes.
# Lane 1: every test but the timing lane's, two packages at a time (-p 2)
# and up to TEST_PARALLELISM tests marked t.Parallel() at once in each;
# these tests assert behaviour and exact counts, never a speed, and must
# hold beside another package's servers (a JVM, mariadb-install-db) on a
# machine as loaded as two busy loops. Lane 2, the timing lane: the tests
# whose names end in Timed (TIMED), one package at a time (-p 1) and none
# t.Parallel, so each runs alone: their verdicts compare measured rates or
# latencies (ab and compare gates, an open loop's achieved rate, harness
# ratios, commands per order, an uncorrected p99) or hang on a few tens of
# milliseconds or on which of two woken goroutines runs first (a renewal
# every 17 ms, a fault's phase against the holders' turns, a write racing
# its loss report), which another package's CPU use would move.
# A test joins the timing lane by its name alone; TIMED_PKGS are the
# packages that declare one (internal/cli's TestTimingLane checks that no
# Timed test calls t.Parallel and that this target keeps the two lanes).
# docs/development.md, Tests, lists the lane.
# LOCKBENCH_CHECK_SCHEMA=1: every result file written, by the lockbench
# processes the tests start too, is checked against results/schema.json.
# TEST_FIRST: the longest packages of lane 1, started first so that the
# last packages to start are short ones (go test starts the packages in
# the order given, and runs each once). After the trim of 2026-12-04
# (each alone with lane 1's flags at load 2-4: internal/cli 197 s,
# strategies/locktest 151 s, internal/engine 108 s) the first three are
# still the longest, in that order; strategies/ext (the adapters, about
# 100 s), internal/faults (89 s) and strategies/baselines (42 s) follow.
TEST_FIRST := ./internal/cli ./strategies/locktest ./internal/engine ./strategies/ext ./internal/faults ./strategies/baselines
TIMED := Timed$$
TIMED_PKGS = $(sort $(dir $(shell grep -rlE --include='*_test.go' '^func Test[A-Za-z0-9_]*Timed.t [*]testing[.]T' .)))
TEST_PARALLELISM := 2

# The first line builds every test binary (-exec /bin/true: built, not
# run, so no TestMain starts its servers for nothing: 25 s against 75 s
# for -run '^$$' with the build cached, 2026-12-04), so that a build
# error stops make before any test runs.
test: servers lint adapters
	$(GO) test -race -count=1 -exec /bin/true ./... >/dev/null
	LOCKBENCH_CHECK_SCHEMA=1 $(GO) test -race -count=1 -p 2 -parallel $(TEST_PARALLELISM) -timeout 25m -skip '$(TIMED)' $(TEST_FIRST) ./...
	LOCKBENCH_CHECK_SCHEMA=1 $(GO) test -race -count=1 -p 1 -timeout 25m -run '$(TIMED)' $(TIMED_PKGS)

# go vet, gofmt and staticcheck (fetched through the Go module proxy).
lint:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) run $(STATICCHECK) ./...

# redis-server must be on PATH: install Debian's package when root, else say how.
redis:
	@if command -v redis-server >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "redis-server is missing; installing Debian's redis-server package"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null || exit 1; \
	else \
	  echo "redis-server is missing: install it (sudo apt-get install redis-server, or brew install redis)," >&2; \
	  echo "or run against your own server: $(BIN) run --addr host:port" >&2; exit 1; \
	fi

# Every server the tests start: redis-server, and the baseline strategies'
# MariaDB (sql-rowlock, sql-guard), ZooKeeper (zk) and etcd (etcd). Missing
# Debian packages are installed in one apt-get run when root; otherwise
# make says how (a baseline whose server is missing is skipped at run time).
SERVER_PKGS_MISSING = $$( \
	command -v redis-server >/dev/null 2>&1 || printf ' redis-server'; \
	{ command -v mariadbd >/dev/null 2>&1 || test -x /usr/sbin/mariadbd; } || printf ' mariadb-server'; \
	{ command -v java >/dev/null 2>&1 && test -f /usr/share/java/zookeeper.jar; } || printf ' zookeeper'; \
	command -v etcd >/dev/null 2>&1 || printf ' etcd-server'; \
	command -v mvn >/dev/null 2>&1 || printf ' maven'; \
	command -v node >/dev/null 2>&1 || printf ' nodejs'; \
	command -v npm >/dev/null 2>&1 || printf ' npm'; \
	{ command -v python3 >/dev/null 2>&1 && python3 -c 'import ensurepip, venv' 2>/dev/null; } || printf ' python3-venv')

# The external-lock adapters (adapters/*/build.sh, docs/external-locks.md):
# each builds its adapter into a folder git ignores, from pinned
# dependencies (Maven Central, the npm registry, PyPI), only when its
# output is missing or older than its sources; when its runtime (java and
# mvn, node and npm, python3) is absent it says so and exits 0, and the
# adapter's strategies and tests are skipped with that reason.
adapters:
	@for b in adapters/*/build.sh; do [ -f "$$b" ] || continue; sh "$$b" || exit 1; done

servers:
	@missing="$(SERVER_PKGS_MISSING)"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	else \
	  echo "missing Debian packages:$$missing; install them (sudo apt-get install$$missing)" >&2; \
	  case "$$missing" in *redis-server*) exit 1;; esac; \
	  echo "(the baseline strategies that need them are skipped until then)" >&2; \
	fi

# Harness speed (lockbench vs redis-benchmark vs a bare loop) and the Go
# benchmarks of every strategy's acquire+release cycle (benchstat format).
bench: redis build
	./$(BIN) harness
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2000x ./strategies/locktest
	$(GO) test -run '^$$' -bench Hold -benchmem ./workloads
	# scale: 10,000 and 50,000 clients in one process (meta.max_rss_mb in the JSON;
	# docs/how-it-measures.md, Memory per client)
	./$(BIN) run -q --strategy atomic --driver rueidis --workload lock-cycle --keys 1000000 \
	  --work 0s --clients 10000 --duration 5s --retry none --force --out results/scale-10k.json
	./$(BIN) run -q --strategy atomic --driver rueidis --workload lock-cycle --keys 1000000 \
	  --work 0s --clients 50000 --duration 5s --retry none --force --out results/scale-50k.json
	@for f in results/scale-10k.json results/scale-50k.json; do \
	  printf '%s: peak RSS %s MiB\n' $$f "$$(grep -o '"max_rss_mb": *[0-9.]*' $$f | grep -o '[0-9.]*$$')"; done
	# contention on one hot key (1 ms critical section, 1 s lease, rueidis): every
	# policy at 10, 200 and 2,000 clients in one table per strategy, then the goals
	# of docs/contention.md as thresholds: printed; a missed goal (exit 3) does not stop make.
	# handoff runs 30 s per count: 8 s give each of 2,000 clients 2 or 3 turns, and
	# Jain's index of such counts is about 0.96 however fair the lock. The harness's
	# handover-bound lines above are the efficiency a bare hand-over reaches here.
	./$(BIN) sweep -q $(HOTKEY) --strategy atomic --retry spin,fixed:interval=10ms,backoff,pubsub,csc \
	  --out results/contention-atomic.json
	./$(BIN) sweep -q $(HOTKEY) --strategy fair --retry pubsub --out results/contention-fair.json
	./$(BIN) sweep -q $(HOTKEY) --duration 30s --strategy handoff --out results/contention-handoff.json \
	  --fail-on 'efficiency>=0.90,jain>=0.99,commands_per_op<=6,acquire_p99_per_turn<=1.2' || [ $$? -eq 3 ]
	./$(BIN) run -q $(HOTKEY_ONE) --strategy fair --retry pubsub --clients 200 --out results/contention-fair-200.json \
	  --fail-on 'commands_per_op<=20' || [ $$? -eq 3 ]

HOTKEY_ONE := --workload lock-cycle --keys 1 --work 1ms --ttl 1s --driver rueidis --duration 8s --force
HOTKEY := $(HOTKEY_ONE) --clients 10,200,2000

# The regression gate: this tree's build against REGRESS_BASE's (default
# HEAD; in CI the target branch, REGRESS_BASE=origin/main) with lockbench
# ab, interleaved rounds until a verdict or REGRESS_BUDGET (default 2m):
# exit 1 when a figure (ops/s, p99, commands/op, CPU/op, RSS) is worse or
# new violations appear, 4 when the baseline itself is broken. An honest
# 10 % slowdown that must fail: make regress REGRESS_NEW='bin/lockbench:--test-slowdown atomic=10%'.
# scripts/regress-selftest.sh runs both beside two busy loops; docs/ci.md.
regress: redis build
	scripts/regress.sh

# The gate's false-alarm rate and power (printed, not asserted; up to an
# hour): BENCH_GATE_N (20) A/A gates and BENCH_GATE_N A/B gates with a 10 %
# slowdown, each beside two busy loops, each with make regress's budget.
bench-gate: redis build
	scripts/bench-gate.sh

# The JSON Schema of the result file, generated from internal/report's
# types: run after changing one (a test fails while the committed copies,
# results/schema.json and internal/report/schemacheck/schema.json, are stale).
schema:
	$(GO) run ./internal/report/schemagen

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
