package files

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// checkKeys refuses a key of tasks.json that names a field only in
// another letter case ("Tasks", "Class_Names"): encoding/json would take
// it for the field, and a second key differing in case would silently
// replace the first. Keys are the field names exactly, as the docs and
// WriteDescription spell them. Malformed JSON is left to the decoder.
func checkKeys(b []byte) error {
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		return nil
	}
	if err := exactKeys(top, reflect.TypeFor[Description](), ""); err != nil {
		return err
	}
	var tasks []map[string]json.RawMessage
	if json.Unmarshal(top["tasks"], &tasks) != nil {
		return nil
	}
	for j, t := range tasks {
		if err := exactKeys(t, reflect.TypeFor[TaskSpec](), fmt.Sprintf("task %d: ", j)); err != nil {
			return err
		}
	}
	return nil
}

// exactKeys refuses a key of m that is one of typ's JSON field names in
// another letter case; where says where m is, for the message.
func exactKeys(m map[string]json.RawMessage, typ reflect.Type, where string) error {
	var names []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if slices.Contains(names, k) {
			continue
		}
		for _, n := range names {
			if strings.EqualFold(n, k) {
				return fmt.Errorf("%skey %q: keys are case-sensitive; write %q", where, k, n)
			}
		}
	}
	return nil
}
