// Package jsondiff names where two values differ as JSON, for messages
// that say what to fix (a saved run's settings against those asked for)
// rather than print both whole values.
package jsondiff

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
)

// First names the first field, as a JSON path (settings.lr,
// method_params.alpha, runs[2].seed), in which a and b differ as JSON,
// with its two values: "" where they are the same. A message naming the
// field tells what to fix; the two whole objects would not.
func First(a, b any) string {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return ""
	}
	var va, vb any
	if json.Unmarshal(ja, &va) != nil || json.Unmarshal(jb, &vb) != nil {
		return ""
	}
	path, x, y, ok := differ("", va, vb)
	if !ok {
		return ""
	}
	if path == "" {
		path = "the whole"
	}
	return fmt.Sprintf("%s: %s against %s", path, Short(x, 60), Short(y, 60))
}

// differ is First on decoded JSON values below path.
func differ(path string, a, b any) (string, any, any, bool) {
	if reflect.DeepEqual(a, b) {
		return "", nil, nil, false
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		for _, k := range Keys(x, y) {
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			if p, u, v, ok := differ(sub, x[k], y[k]); ok {
				return p, u, v, true
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			break
		}
		for i := range x {
			if p, u, v, ok := differ(path+"["+strconv.Itoa(i)+"]", x[i], y[i]); ok {
				return p, u, v, true
			}
		}
	}
	return path, a, b, true
}

// Keys are the keys of a and b, sorted.
func Keys(a, b map[string]any) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// Short is a JSON value for a message, cut to n bytes at most (n ≥ 4);
// an absent one is "none".
func Short(v any, n int) string {
	if v == nil {
		return "none"
	}
	b, _ := json.Marshal(v)
	if len(b) > n {
		return string(b[:n-3]) + "..."
	}
	return string(b)
}
