package jsondiff

import "testing"

// First names the first differing field by its JSON path, an
// absent one as none, and "" for equal values.
func TestFirst(t *testing.T) {
	type inner struct {
		Seeds []int          `json:"seeds"`
		Opts  map[string]int `json:"opts,omitempty"`
	}
	type outer struct {
		Name  string `json:"name"`
		Inner inner  `json:"inner"`
	}
	a := outer{"x", inner{[]int{1, 2}, map[string]int{"k": 1}}}
	for _, tc := range []struct {
		b    outer
		want string
	}{
		{a, ""},
		{outer{"y", a.Inner}, `name: "x" against "y"`},
		{outer{"x", inner{[]int{1, 3}, a.Inner.Opts}}, "inner.seeds[1]: 2 against 3"},
		{outer{"x", inner{[]int{1}, a.Inner.Opts}}, "inner.seeds: [1,2] against [1]"},
		{outer{"x", inner{a.Inner.Seeds, nil}}, `inner.opts: {"k":1} against none`},
	} {
		if got := First(a, tc.b); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.b, got, tc.want)
		}
	}
}

// Short cuts a long value to n bytes with "...", and names an absent one.
func TestShort(t *testing.T) {
	for _, tc := range []struct {
		v    any
		n    int
		want string
	}{
		{nil, 10, "none"},
		{"abc", 10, `"abc"`},
		{"abcdefghij", 8, `"abcd...`},
		{[]int{1, 2}, 5, "[1,2]"},
	} {
		if got := Short(tc.v, tc.n); got != tc.want {
			t.Errorf("Short(%v, %d) = %q, want %q", tc.v, tc.n, got, tc.want)
		}
	}
}
