// Package cli is lockbench's command line: run, sweep, list, claims,
// report, show, compare, merge, check, clean, harness and version.
// cmd/lockbench and lockbench.Main call Main; every strategy, driver,
// workload, fault and retry policy registered in the process before Main
// is called is available to it by name. See README.md.
//
// # Layers
//
// The files form layers, and a file refers only to files of its own layer
// listed before it or to lower layers (bottom first):
//
//  1. base: exit.go (exit codes, the errors that make them, signals'
//     codes, CheckArgs's mark), version.go, util.go, godebug.go,
//     resultset.go (result sets put into place as a set), outfile.go
//     (result files reserved and written), results.go (result
//     files read).
//  2. output: print.go (the results and thresholds printed, --columns).
//  3. flags: pluginflags.go (a flag per plugin parameter), completion.go,
//     flags.go (runFlags), clientramp.go (--clients: a count or a client
//     ramp), shared.go (the settings every scenario shares,
//     declared once: their flags, checks, completion and result keys).
//  4. plan: pluginspec.go (NAME:param=value items), addr.go (the
//     connection flags read), flagrules.go (flags that go together),
//     scenario.go (scenario files), sweeplist.go (sweep's client counts),
//     layout.go (a scenario's server layout, --rate read), plan.go (validate: the plan builder, flags to typed values and
//     checked scenarios), concurrent.go (a scenario file's scenarios:
//     list, one after another or at once: its plan).
//  5. scenario loop: progress.go, procfaults.go, segments.go, history.go,
//     servers.go (layouts started), leftkeys.go, provenance.go, loop.go
//     (each scenario placed, measured, recorded, skipped or failed).
//  6. run lifecycle: runrecord.go (the run records clean --stale reads),
//     finish.go (files reserved, results written and
//     printed, the exit), procs.go (--procs: child processes), matrix.go
//     (runMatrix: metrics endpoint, reservation, signals, progress,
//     servers, around the loop).
//  7. commands: run.go (run's flags), sweep.go, show.go, list.go, compare.go, ab.go,
//     merge.go, check.go, clean.go, claims.go, harness.go, reportcmd.go.
//  8. entry: main.go (the root command, Main, exit codes of errors),
//     checkargs.go (CheckArgs).
package cli
