package cli

// A scenario file with a scenarios: list: several scenarios in one run,
// one after another, or all at once on one set of servers (concurrent:
// true).

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/thresholds"
)

// runLevel are the run flags a scenarios: item cannot set: they are the
// run's (its servers, its outputs, its processes), given at the file's
// top level or on the command line.
var runLevel = map[string]bool{
	"addr": true, "resource-addr": true, "allow-nonempty": true, "backend": true, "barrier-timeout": true, "cluster": true,
	"columns": true, "fail-on": true, "file": true, "force": true, "format": true, "history": true,
	"metrics-addr": true, "metrics-linger": true, "nodes": true, "out": true, "procs": true,
	"quiet": true, "repeat": true, "run-id": true, "segment": true, "segment-count": true,
	"sentinel-master": true, "sentinel-password": true, "sentinel-password-file": true,
	"password": true, "password-file": true, "username": true, "tls": true, "tls-ca-file": true,
	"tls-cert-file": true, "tls-key-file": true, "tls-server-name": true,
	"tls-insecure-skip-verify": true, "topology": true,
}

// multiFile is a scenario file's scenarios: list.
type multiFile struct {
	path       string
	concurrent bool
	items      []*yaml.Node          // each a mapping of one scenario's fields
	top        map[string]*yaml.Node // the top-level fields' keys, by name
	// fresh makes a new set of the run flags and the runFlags it parses
	// into (run.go's newRunCmdFlags).
	fresh func() (*pflag.FlagSet, *runFlags)
}

// applyRunFile is lockbench run's applyFile: the top-level fields set
// fs's flags as applyFile does; a scenarios: list (and concurrent:) is
// returned (nil: none, a file of one matrix as before). fresh makes new
// sets of the run flags (multiFile.fresh).
func applyRunFile(fs *pflag.FlagSet, path string, fresh func() (*pflag.FlagSet, *runFlags)) (*multiFile, error) {
	root, err := readScenarioFile(path)
	if err != nil {
		return nil, err
	}
	m := &multiFile{path: path, top: map[string]*yaml.Node{}, fresh: fresh}
	var top []*yaml.Node
	var list, conc, concKey *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		switch k.Value {
		case "scenarios":
			list = v
		case "concurrent":
			conc, concKey = v, k
		default:
			m.top[k.Value] = k
			top = append(top, k, v)
		}
	}
	errs := m.read(list, conc, concKey)
	scratch, _ := fresh()
	if err := applyFields(fs, scratch, path, top); err != nil {
		errs = append(errs, inner(err))
	}
	if len(errs) > 0 {
		return nil, usageError{errors.Join(errs...)}
	}
	if list == nil {
		return nil, nil
	}
	return m, nil
}

// read checks concurrent: and scenarios: and keeps the list's items.
func (m *multiFile) read(list, conc, concKey *yaml.Node) []error {
	var errs []error
	bad := func(n *yaml.Node, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", m.path, n.Line, fmt.Sprintf(format, a...)))
	}
	if conc != nil {
		if conc.Kind != yaml.ScalarNode || conc.Tag != "!!bool" {
			bad(conc, "concurrent: want true or false")
		} else {
			m.concurrent = strings.EqualFold(conc.Value, "true")
		}
		if list == nil {
			bad(concKey, "concurrent goes with scenarios: (a list of the scenarios to run at once, each a mapping of flag: value lines)")
		}
	}
	if list == nil {
		return errs
	}
	if list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		bad(list, "scenarios: want a list of scenarios, each a mapping of flag: value lines (- strategy: atomic)")
		return errs
	}
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			bad(item, "scenarios: a scenario is a mapping of flag: value lines, not a %s", kindName(item))
			continue
		}
		m.items = append(m.items, item)
	}
	return errs
}

// multiPlan is the plan of a file with scenarios: each item's scenario,
// its flags the command line's, then the item's, then the file's top
// level; the thresholds tested on them all; with concurrent: true, every
// scenario marked shared (engine.Env.Shared) and on one layout.
func multiPlan(f *runFlags, main *pflag.FlagSet, m *multiFile) (*plan, error) {
	errs := m.runChecks(f)
	var p *plan
	var lays []engine.Layout
	labels := map[string]bool{}
	for i, item := range m.items {
		pi, lay, label, err := m.itemPlan(main, f.cli, i)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if label != "" && labels[label] {
			errs = append(errs, fmt.Errorf("%s:%d: name %q is given to two scenarios", m.path, item.Line, label))
		}
		labels[label] = true
		if p == nil {
			c := *pi
			c.scenarios, p = nil, &c
		}
		p.scenarios = append(p.scenarios, pi.scenarios[0])
		p.labels = append(p.labels, label)
		p.lines = append(p.lines, item.Line)
		lays = append(lays, lay)
	}
	if len(errs) == 0 {
		errs = append(errs, m.unusedTop(f, p)...)
		errs = append(errs, m.sameLayout(p, lays)...)
		errs = append(errs, m.clientsTogether(p)...)
		errs = append(errs, p.fileThresholds(f)...)
	}
	if len(errs) > 0 {
		return nil, usageError{errors.Join(errs...)}
	}
	p.concurrent = m.concurrent
	for i := range p.scenarios {
		p.scenarios[i].Env.Shared = m.concurrent
	}
	return p, nil
}

// runChecks refuses what does not go with a scenarios: list: execution
// segments and --procs; with concurrent: true, faults and --repeat.
func (m *multiFile) runChecks(f *runFlags) []error {
	var errs []error
	where := func(name string) string {
		if k, ok := m.top[name]; ok && !f.cli[name] {
			return fmt.Sprintf("%s:%d: %s", m.path, k.Line, name)
		}
		return "--" + name
	}
	if f.procs > 0 || f.segment != "" || f.segmentCount != 0 {
		errs = append(errs, fmt.Errorf("%s: a file with scenarios: runs in one process: --procs, --segment and --segment-count do not go with it", m.path))
	}
	if !m.concurrent {
		return errs
	}
	if len(f.faults) > 0 {
		errs = append(errs, fmt.Errorf("%s: a concurrent file injects no faults (a server fault would hit every scenario's figures)", where("fault")))
	}
	if f.repeat > 1 {
		errs = append(errs, fmt.Errorf("%s: a concurrent file runs its scenarios once, together (repeats would not line up)", where("repeat")))
	}
	return errs
}

// itemPlan validates item i's scenario: its plan (one scenario), the
// layout it runs on and its name.
func (m *multiFile) itemPlan(main *pflag.FlagSet, cli map[string]bool, i int) (*plan, engine.Layout, string, error) {
	item := m.items[i]
	fs, fi := m.fresh()
	scratch, _ := m.fresh()
	for name := range cli {
		copyFlag(fs, main.Lookup(name))
	}
	content, label, errs := m.itemFields(item)
	if err := applyFields(fs, scratch, m.path, content); err != nil {
		errs = append(errs, inner(err))
	}
	var fromTop []string
	main.Visit(func(fl *pflag.Flag) {
		if !fs.Changed(fl.Name) {
			copyFlag(fs, fl) // the top level's, where the item sets none
			fromTop = append(fromTop, fl.Name)
		}
	})
	if len(errs) > 0 {
		return nil, engine.Layout{}, "", errors.Join(errs...)
	}
	fi.cli, fi.changed, fi.failOn = cli, changedFlags(fs), nil // thresholds: on every scenario (fileThresholds)
	for _, name := range fromTop {
		// A top-level parameter need not go with every scenario's plugins:
		// with one at least (unusedTop).
		delete(fi.pluginSet, name)
	}
	what := fmt.Sprintf("scenario %d", i+1)
	if label != "" {
		what += " (" + label + ")"
	}
	p, err := validate(fi)
	if err != nil {
		return nil, engine.Layout{}, "", fmt.Errorf("%s:%d: %s: %w", m.path, item.Line, what, inner(err))
	}
	if len(p.scenarios) != 1 {
		return nil, engine.Layout{}, "", m.notOne(fi, item, what, len(p.scenarios))
	}
	sc := p.scenarios[0]
	return p, layoutOf(fi, sc, p.topology, p.nodes, len(p.addrs)), label, nil
}

// itemFields are an item's fields for applyFields, less its name: and
// those an item cannot set (runLevel; fault in a concurrent file).
func (m *multiFile) itemFields(item *yaml.Node) (content []*yaml.Node, label string, errs []error) {
	bad := func(n *yaml.Node, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", m.path, n.Line, fmt.Sprintf(format, a...)))
	}
	for j := 0; j+1 < len(item.Content); j += 2 {
		k, v := item.Content[j], item.Content[j+1]
		name := k.Value
		if alias, ok := fileAliases[name]; ok {
			name = alias
		}
		switch {
		case name == "name":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || strings.TrimSpace(v.Value) == "" {
				bad(v, "name: want a label (a word), not %q", v.Value)
			}
			label = v.Value
		case runLevel[name]:
			bad(k, "%s is the run's, not a scenario's: give it at the top level of the file (or on the command line)", k.Value)
		case name == "fault" && m.concurrent:
			bad(k, "fault: a concurrent file injects no faults (a server fault would hit every scenario's figures)")
		case name == "scenarios" || name == "concurrent":
			bad(k, "%s goes at the top level of the file, not in a scenario", k.Value)
		default:
			content = append(content, k, v)
		}
	}
	return content, label, errs
}

// notOne is the error of an item whose flags make n scenarios: the
// axes given several values, at the line that gave them.
func (m *multiFile) notOne(fi *runFlags, item *yaml.Node, what string, n int) error {
	line := item.Line
	var lists []string
	for _, ax := range []struct{ name, val string }{{"strategy", fi.strategies}, {"driver", fi.drivers},
		{"workload", fi.workloads}, {"retry", fi.retries}} {
		if len(splitRetry(ax.val)) < 2 {
			continue
		}
		lists = append(lists, ax.name+" "+ax.val)
		if k := fieldKey(item, ax.name); k != nil {
			line = k.Line
		} else if k, ok := m.top[ax.name]; ok && line == item.Line {
			line = k.Line
		}
	}
	return fmt.Errorf("%s:%d: %s is %d scenarios (%s): each item of scenarios: is one scenario: give it one strategy, driver, workload and retry",
		m.path, line, what, n, strings.Join(lists, "; "))
}

// fieldKey is the key node of field name in mapping item (nil: none).
func fieldKey(item *yaml.Node, name string) *yaml.Node {
	for j := 0; j+1 < len(item.Content); j += 2 {
		if item.Content[j].Value == name {
			return item.Content[j]
		}
	}
	return nil
}

// unusedTop refuses a strategy or workload parameter given at the top
// level (not on the command line) that no scenario's strategy or
// workload takes.
func (m *multiFile) unusedTop(f *runFlags, p *plan) []error {
	var errs []error
	for _, pp := range pluginParams() {
		k, ok := m.top[pp.Name]
		if !ok || f.cli[pp.Name] {
			continue
		}
		if !slices.ContainsFunc(p.scenarios, func(sc engine.Scenario) bool {
			return slices.Contains(pp.users, sc.Strategy) || slices.Contains(pp.users, sc.Workload)
		}) {
			errs = append(errs, fmt.Errorf("%s:%d: %s goes with %s, and no scenario of the file has one", m.path, k.Line, pp.Name, strings.Join(pp.users, ", ")))
		}
	}
	return errs
}

// sameLayout refuses, in a concurrent file, scenarios that need different
// layouts: they share one set of servers.
func (m *multiFile) sameLayout(p *plan, lays []engine.Layout) []error {
	if !m.concurrent {
		return nil
	}
	var errs []error
	for i := 1; i < len(lays); i++ {
		if lays[i].Kind != lays[0].Kind || lays[i].Servers != lays[0].Servers {
			errs = append(errs, fmt.Errorf("%s:%d: scenario %d (%s) runs on %s, scenario 1 (%s) on %s: the scenarios of a concurrent file share one set of servers, so they must need the same layout (run them one after another without concurrent: true)",
				m.path, p.lines[i], i+1, p.nameOf(i), layoutName(lays[i]), p.nameOf(0), layoutName(lays[0])))
		}
	}
	return errs
}

// clientsTogether refuses concurrent scenarios whose clients add up to
// more than one run may have (maxClients): they all run in this process
// at once.
func (m *multiFile) clientsTogether(p *plan) []error {
	if !m.concurrent {
		return nil
	}
	total := 0
	for _, sc := range p.scenarios {
		total += sc.Clients
	}
	if total > maxClients {
		return []error{fmt.Errorf("%s: the scenarios' clients add up to %d: concurrent scenarios run in one process at once, and a run has at most %d clients", m.path, total, maxClients)}
	}
	return nil
}

// nameOf is scenario i's name: (its strategy when it has none).
func (p *plan) nameOf(i int) string {
	if p.labels[i] != "" {
		return p.labels[i]
	}
	return p.scenarios[i].Strategy
}

// layoutName names a layout as the result's topology does.
func layoutName(l engine.Layout) string {
	if l.Servers > 1 {
		return fmt.Sprintf("%s (%d servers)", l.Kind, l.Servers)
	}
	return string(l.Kind)
}

// fileThresholds are --fail-on's (thresholds: at the top level), tested
// on every scenario of the file.
func (p *plan) fileThresholds(f *runFlags) []error {
	ths, errs := thresholds.ParseList(f.failOn)
	var out []error
	for _, err := range errs {
		out = append(out, fmt.Errorf("--fail-on: %w", err))
	}
	if len(out) == 0 {
		for _, err := range thresholds.Unmatched(ths, scenarioNames(p.scenarios)) {
			out = append(out, fmt.Errorf("--fail-on: %w", err))
		}
	}
	p.thresholds = ths
	return out
}

// inner is a usage error's error (the error itself otherwise).
func inner(err error) error {
	var u usageError
	if errors.As(err, &u) {
		return u.err
	}
	return err
}

// copyFlag sets src's value on dst's flag of the same name (a list flag's
// items replaced, not added to).
func copyFlag(dst *pflag.FlagSet, src *pflag.Flag) {
	if src == nil {
		return
	}
	d := dst.Lookup(src.Name)
	if d == nil {
		return
	}
	if sv, ok := src.Value.(pflag.SliceValue); ok {
		if dv, ok := d.Value.(pflag.SliceValue); ok {
			_ = dv.Replace(sv.GetSlice())
			d.Changed = true
			return
		}
	}
	_ = dst.Set(src.Name, src.Value.String())
}
