package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
)

// firstDiffer names the first field, as a JSON path (settings.lr,
// method_params.alpha, runs[2].seed), in which a and b differ as JSON,
// with its two values: "" where they are the same. A message naming the
// field tells what to fix; the two whole objects would not.
func firstDiffer(a, b any) string {
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
	return fmt.Sprintf("%s: %s against %s", path, short(x), short(y))
}

// differ is firstDiffer on decoded JSON values below path.
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
		keys := slices.Sorted(maps.Keys(x))
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
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

// short is a JSON value for a message, cut to a readable length; an
// absent one is "none".
func short(v any) string {
	if v == nil {
		return "none"
	}
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}
