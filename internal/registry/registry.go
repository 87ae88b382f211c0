// Package registry is the one registry pattern lockbench uses for drivers,
// strategies and workloads (after database/sql): entries register by name
// in init(); a nil or duplicate registration panics; names list sorted; an
// unknown name is an error that lists the valid ones.
package registry

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Registry maps names to entries of type T. Safe for concurrent use.
type Registry[T any] struct {
	kind    string // "strategy", "driver", ... for messages
	mu      sync.RWMutex
	entries map[string]T
}

// New returns an empty registry; kind names its entries in messages.
func New[T any](kind string) *Registry[T] {
	return &Registry[T]{kind: kind, entries: map[string]T{}}
}

// Register adds v under name. It panics on an empty or duplicate name.
func (r *Registry[T]) Register(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "" {
		panic("registry: empty " + r.kind + " name")
	}
	if _, dup := r.entries[name]; dup {
		panic("registry: " + r.kind + " " + name + " registered twice")
	}
	r.entries[name] = v
}

// Get returns the entry for name and whether it exists.
func (r *Registry[T]) Get(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.entries[name]
	return v, ok
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

// Lookup returns the entry for name, or an error wrapping sentinel that
// names the valid entries.
func (r *Registry[T]) Lookup(name string, sentinel error) (T, error) {
	v, ok := r.Get(name)
	if !ok {
		return v, fmt.Errorf("%w %q (valid: %s)", sentinel, name, strings.Join(r.Names(), ", "))
	}
	return v, nil
}
