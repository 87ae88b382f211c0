// Package registry is the one registry lockbench uses for drivers,
// strategies, workloads, faults and retry policies (after database/sql):
// entries register by name in init(), each with a one-line description and
// the parameters it declares; a nil or duplicate registration panics; names
// list sorted; an unknown name is an error that lists the valid ones.
//
// Parameters (Param) are declared once, by the plugin that reads them. The
// command line's flags, `lockbench list`, the scenario-file fields and the
// result file's params are generated from those declarations, and a
// plugin's factory reads its values from Values: no central options struct
// carries them.
package registry

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/agnivade/levenshtein"
)

// Entry is one registered plugin.
type Entry[T any] struct {
	// Name is the registered name ("atomic", "flash-sale", "backoff").
	Name string
	// Desc is a one-line description for `lockbench list`.
	Desc string
	// Params are the options the plugin declares, in the order declared.
	Params []Param
	// Value is the plugin itself (typically its factory and needs).
	Value T
}

// Param returns the declared parameter called name.
func (e Entry[T]) Param(name string) (Param, bool) {
	for _, p := range e.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// Registry maps names to entries of type T. Safe for concurrent use.
type Registry[T any] struct {
	kind    string // "strategy", "driver", ... for messages
	mu      sync.RWMutex
	entries map[string]Entry[T]
}

// New returns an empty registry; kind names its entries in messages.
func New[T any](kind string) *Registry[T] {
	return &Registry[T]{kind: kind, entries: map[string]Entry[T]{}}
}

// Kind is what the registry's entries are called in messages ("strategy").
func (r *Registry[T]) Kind() string { return r.kind }

// Register adds v under name with its description and parameters. It
// panics on an empty or duplicate name, and on a parameter declared wrong
// (see CheckParams): these are programming errors, found at start-up.
func (r *Registry[T]) Register(name, desc string, params []Param, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "" {
		panic("registry: empty " + r.kind + " name")
	}
	if _, dup := r.entries[name]; dup {
		panic("registry: " + r.kind + " " + name + " registered twice")
	}
	if err := CheckParams(params); err != nil {
		panic(fmt.Sprintf("registry: %s %s: %v", r.kind, name, err))
	}
	r.entries[name] = Entry[T]{Name: name, Desc: desc, Params: params, Value: v}
}

// Get returns the entry for name and whether it exists.
func (r *Registry[T]) Get(name string) (Entry[T], bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.entries[name]
	return e, ok
}

// Names lists the registered names, sorted.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.entries))
	for n := range r.entries {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Entries lists the registered entries, sorted by name.
func (r *Registry[T]) Entries() []Entry[T] {
	names := r.Names()
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Entry[T], len(names))
	for i, n := range names {
		out[i] = r.entries[n]
	}
	return out
}

// Lookup returns the entry for name, or an error wrapping sentinel that
// suggests the nearest name (see Suggest) and lists the valid ones:
// `unknown strategy "atomc"; did you mean "atomic"? (valid: ...)`.
func (r *Registry[T]) Lookup(name string, sentinel error) (Entry[T], error) {
	e, ok := r.Get(name)
	if !ok {
		names := r.Names()
		return e, fmt.Errorf("%w %q%s (valid: %s)", sentinel, name, Suggest(name, names), strings.Join(names, ", "))
	}
	return e, nil
}

// Suggest returns `; did you mean "X"?` for the valid name X closest to s,
// or "" when none is close: at most 2 edits (Levenshtein distance) and
// fewer than half the length of s, or a valid name that contains s (3
// characters or more).
func Suggest(s string, valid []string) string {
	best, bestD := "", min(3, (len(s)+1)/2)
	for _, v := range valid {
		if len(s) > len(v)+2 {
			// Neither within distance 2 nor contained in v: skip the
			// distance, quadratic in s (a 10 MB value took 15 s).
			continue
		}
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
