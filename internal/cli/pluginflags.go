package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// pluginParam is one parameter that strategies or workloads declare, with
// the plugins that declare it: one flag however many declare it.
type pluginParam struct {
	registry.Param
	users []string // the declaring plugins' names: strategies, then workloads, each sorted
	docs  []string // each user's Doc, in the order of users
}

// help is the flag's help text: the users and the Doc they share, or, when
// their Docs differ (one name, several meanings: redlock's and the
// libraries' --extend), each Doc after the users that declare it and the
// scoped form that gives one of them its own value.
func (pp *pluginParam) help() string {
	same := true
	for _, d := range pp.docs {
		same = same && d == pp.docs[0]
	}
	if same {
		return strings.Join(pp.users, ", ") + ": " + pp.Doc
	}
	var order []string // the distinct Docs, first use first
	who := map[string][]string{}
	for i, u := range pp.users {
		if who[pp.docs[i]] == nil {
			order = append(order, pp.docs[i])
		}
		who[pp.docs[i]] = append(who[pp.docs[i]], u)
	}
	parts := make([]string, len(order))
	for i, d := range order {
		parts[i] = strings.Join(who[d], ", ") + ": " + d
	}
	kind := "workload"
	if strategies.Known(pp.users[0]) {
		kind = "strategy"
	}
	return strings.Join(parts, "; ") + " (this flag sets them all; one's own: --" + kind + " NAME:" + pp.Name + "=VALUE)"
}

// pluginParams gathers the parameters every registered strategy and
// workload declares, sorted by name. A name two plugins declare with
// different types or defaults is a programming error: it panics.
func pluginParams() []pluginParam {
	byName := map[string]*pluginParam{}
	add := func(user string, ps []registry.Param) {
		for _, p := range ps {
			pp, ok := byName[p.Name]
			if !ok {
				pp = &pluginParam{Param: p}
				byName[p.Name] = pp
			} else if pp.Type() != p.Type() || registry.Format(pp.Default) != registry.Format(p.Default) {
				panic(fmt.Sprintf("parameter %s is declared as %s (default %s) by %s and as %s (default %s) by %s",
					p.Name, pp.Type(), registry.Format(pp.Default), pp.users[0], p.Type(), registry.Format(p.Default), user))
			}
			pp.users = append(pp.users, user)
			pp.docs = append(pp.docs, p.Doc)
		}
	}
	eachPlugin(add)
	out := make([]pluginParam, 0, len(byName))
	for _, pp := range byName {
		out = append(out, *pp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// paramFlag is a run flag generated from a plugin parameter. Set parses the
// value's type only and stores it in values (engine.Validate checks every
// value together, so that all problems are reported at once) and marks the
// parameter in set.
type paramFlag struct {
	p      registry.Param
	values registry.Values
	set    map[string]bool
}

func (f *paramFlag) String() string { return registry.Format(f.values[f.p.Name]) }
func (f *paramFlag) Type() string   { return f.p.Type() }
func (f *paramFlag) IsBoolFlag() bool {
	_, ok := f.p.Default.(bool)
	return ok
}

func (f *paramFlag) Set(s string) error {
	v, err := f.p.ParseType(s)
	if err != nil {
		return err
	}
	f.values[f.p.Name] = v
	f.set[f.p.Name] = true
	return nil
}

// pluginFlags defines one flag per plugin parameter on fs, whose help names
// the plugins that declare it. It returns the values, every parameter at
// its default until a flag sets it, and the set of parameters set.
func pluginFlags(fs *pflag.FlagSet) (registry.Values, map[string]bool) {
	values, set := registry.Values{}, map[string]bool{}
	for _, pp := range pluginParams() {
		values[pp.Name] = pp.Default
		f := &paramFlag{p: pp.Param, values: values, set: set}
		fl := fs.VarPF(f, pp.Name, "", pp.help())
		if f.IsBoolFlag() {
			fl.NoOptDefVal = "true"
		}
	}
	return values, set
}

// paramDefaults is every strategy's and workload's parameter defaults by
// plugin name and result key, for Meta.ParamDefaults.
func paramDefaults() map[string]map[string]string {
	out := map[string]map[string]string{}
	add := func(name string, ps []registry.Param) {
		if len(ps) == 0 {
			return
		}
		m := map[string]string{}
		for _, p := range ps {
			m[p.ResultKey()] = registry.Format(p.Default)
		}
		out[name] = m
	}
	eachPlugin(add)
	return out
}

// eachPlugin calls f with the name and declared parameters of every
// registered strategy, then of every workload.
func eachPlugin(f func(name string, ps []registry.Param)) {
	for _, e := range strategies.Entries() {
		f(e.Name, e.Params)
	}
	for _, e := range workloads.Entries() {
		f(e.Name, e.Params)
	}
}
