// Package registry is the table behind each of the project's pluggable
// axes (methods, models, data sets, toy problems): a name maps to a value,
// and the names keep the order they were registered in, so that the
// commands' help and error messages list them the same way every time.
//
// Each axis keeps one Registry and registers its built-ins in one place;
// a new entry is one more Register call, and everything that takes a name
// (flags, checkpoints, help) finds it there.
package registry

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Registry maps names to values of type T. The zero value is not usable;
// make one with New.
type Registry[T any] struct {
	kind string // what the values are, for messages: "method", "data set"

	mu     sync.RWMutex
	names  []string
	values map[string]T
}

// New returns an empty registry of values that messages call kind.
func New[T any](kind string) *Registry[T] {
	return &Registry[T]{kind: kind, values: map[string]T{}}
}

// Register adds v under name. An empty name or one already taken is a
// programmer error (two entries would answer to the same flag value), and
// panics.
func (r *Registry[T]) Register(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case name == "" || strings.TrimSpace(name) != name || strings.ContainsAny(name, ",:"):
		// Commas separate names in lists (compare -methods) and a colon
		// separates a method from its preset.
		panic(fmt.Sprintf("registry: %s name %q is empty, has surrounding spaces, a comma or a colon", r.kind, name))
	case slices.Contains(r.names, name):
		panic(fmt.Sprintf("registry: %s %q registered twice", r.kind, name))
	}
	r.names = append(r.names, name)
	r.values[name] = v
}

// Lookup returns the value registered under name.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.values[name]
	return v, ok
}

// Names lists the registered names in the order they were registered.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.names)
}

// Values lists the registered values in the order they were registered.
func (r *Registry[T]) Values() []T {
	r.mu.RLock()
	defer r.mu.RUnlock()
	vs := make([]T, len(r.names))
	for i, n := range r.names {
		vs[i] = r.values[n]
	}
	return vs
}
