package chart

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/lockbench/lockbench/internal/report"
)

var page = template.Must(template.New("index").Funcs(template.FuncMap{
	"join": func(a []string) string { return strings.Join(a, " ") }, "ms": report.FormatMS,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>lockbench report</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th { background: #eee; }
td.name { text-align: left; }
td.bad { color: #b00; font-weight: bold; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0 1.5em; }
.note { color: #666; }
</style>
</head>
<body>
<h1>lockbench report</h1>
<ul>
{{range .Files}}<li><b>{{.Label}}</b>: started {{.Run.Meta.StartedAt}}, lockbench {{.Run.Meta.GitCommit}}, Redis {{.Run.Meta.RedisVersion}}, {{.Run.Meta.Topology}}; <code>lockbench {{join .Run.Meta.Args}}</code>{{if .Run.Interrupted}} <b>(interrupted)</b>{{end}}{{if .Run.Failed}} <b>(failed: {{.Run.Failed}})</b>{{end}}</li>
{{end}}</ul>
<h2>Summary</h2>
<table id="summary">
<tr>{{if .Multi}}<th>file</th>{{end}}<th>strategy</th><th>driver</th><th>workload</th><th>retry</th><th>clients</th><th>ops/s</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th><th>violations</th><th>errors</th><th>stop</th></tr>
{{range .Rows}}<tr>{{if $.Multi}}<td class="name">{{.File}}</td>{{end}}<td class="name">{{.S.Strategy}}</td><td class="name">{{.S.Driver}}</td><td class="name">{{.S.Workload}}</td><td class="name">{{.Retry}}</td><td>{{.S.Clients}}</td><td>{{printf "%.0f" .S.OpsPerSec}}</td><td>{{ms .S.LatencyMS.P50}}</td><td>{{ms .S.LatencyMS.P99}}</td><td>{{ms .S.LatencyMS.P999}}</td><td>{{ms .S.LatencyMS.Max}}</td><td{{if .Violations}} class="bad"{{end}}>{{.ViolationText}}</td><td>{{.Errors}}</td><td>{{.S.StopReason}}</td></tr>
{{end}}</table>
<p class="note">Latency is the whole operation (acquire with retries, critical section, release). Violations: each kind of results/README.md with its own count; kinds are not added together, since one event may count under several (an overlap in flash-sale is also an oversell, a lost update and a foreign release).</p>
{{range .Charts}}<h2>{{.Title}}</h2>
<a href="{{.Name}}.svg"><img src="{{.Name}}.png" alt="{{.Title}}"></a>
{{end}}{{range .Skipped}}<p class="note">{{.}}</p>
{{end}}</body>
</html>
`))

type row struct {
	File, Retry   string
	S             report.Scenario
	Violations    int64
	ViolationText string
	Errors        int64
}

var titles = map[string]string{
	"spectrum":   "Latency by percentile",
	"ops":        "Throughput",
	"violations": "Safety violations",
	"timeline":   "Throughput over time (fault windows shaded)",
	LatencyChart: "Latency over time (fault windows shaded)",
	SweepChart:   "Sweep: figures against clients (log scale)",
}

func writeIndex(path string, in []Input, ss []series, res *Result) error {
	type chartRef struct{ Name, Title string }
	data := struct {
		Files   []Input
		Multi   bool
		Rows    []row
		Charts  []chartRef
		Skipped []string
	}{Files: in, Multi: len(in) > 1}
	for _, s := range ss {
		v := s.s.Violations
		r := row{File: s.file, S: s.s, Retry: s.s.Retry, Violations: v.Total(),
			Errors: s.s.Counters.Errors + s.s.Counters.Failures + s.s.Counters.Timeouts}
		r.ViolationText = violationText(v)
		data.Rows = append(data.Rows, r)
	}
	for _, name := range res.Written {
		t, ok := titles[name]
		if !ok {
			t = res.titles[name]
		}
		data.Charts = append(data.Charts, chartRef{Name: name, Title: t})
	}
	for _, name := range Charts {
		if why, ok := res.Skipped[name]; ok {
			data.Skipped = append(data.Skipped, fmt.Sprintf("%s: not drawn: %s.", titles[name], why))
		}
	}
	return report.WriteAtomic(path, func(w io.Writer) error { return page.Execute(w, data) })
}

// violationText is the non-zero kinds, each its own count, not added
// together (one overlap may also be an oversell, a lost update and a
// foreign release): "overlap 7, oversell 5"; "0" for none.
func violationText(v report.Violations) string {
	var parts []string
	for _, k := range report.ViolationKinds {
		if n := k.Of(v); n != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k.Name, n))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}
