package registry

import (
	"slices"
	"strings"
	"testing"
)

// Names and values come back in registration order; an unknown name is
// not found.
func TestOrderAndLookup(t *testing.T) {
	r := New[int]("number")
	for i, n := range []string{"two", "one", "three"} {
		r.Register(n, i)
	}
	if got := r.Names(); !slices.Equal(got, []string{"two", "one", "three"}) {
		t.Errorf("names %v", got)
	}
	if got := r.Values(); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("values %v", got)
	}
	if v, ok := r.Lookup("one"); !ok || v != 1 {
		t.Errorf("one: %v, %v", v, ok)
	}
	if _, ok := r.Lookup("four"); ok {
		t.Error("four found")
	}
	// The lists are copies: changing one leaves the registry as it was.
	r.Names()[0] = "x"
	if r.Names()[0] != "two" {
		t.Error("Names returned the registry's own slice")
	}
}

// A name taken twice, an empty one, or one that cannot stand in a list
// is a programmer error.
func TestRegisterPanics(t *testing.T) {
	for _, name := range []string{"a", "", " b", "c,d", "e:f"} {
		r := New[int]("number")
		r.Register("a", 1)
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, "number") {
					t.Errorf("%q: panic %q, want one naming the kind", name, msg)
				}
			}()
			r.Register(name, 2)
		}()
	}
}
