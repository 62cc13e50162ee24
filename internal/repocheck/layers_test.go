package repocheck

import (
	"bufio"
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// layers orders the top-level folders from the bottom: a folder may import
// those of the layers below its own. Folders of one layer are peers and
// import none of each other.
var layers = [][]string{
	{"internal"},
	{"checkpoints", "metrics", "optim"},
	{"particles"},
	{"data"},
	{"models"},
	{"engine"},
	{"experiment"},
	{"cmd", "examples"},
}

// maxAgainstLayers is how many imports may go against the layers' order.
// Each is printed by TestLayers; lower it when one goes.
const maxAgainstLayers = 3

// layerOf returns the layer of a top-level folder, or -1 for a folder
// the order does not place.
func layerOf(folder string) int {
	for i, l := range layers {
		for _, f := range l {
			if f == folder {
				return i
			}
		}
	}
	return -1
}

// modulePath reads the module's path from the go.mod in root.
func modulePath(t *testing.T, root string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	t.Fatal("go.mod names no module")
	return ""
}

// importEdge is one package of the module importing another, both named
// by their folders relative to the root.
type importEdge struct{ from, to string }

// moduleImports returns every import of one of the module's packages by
// another, read from every .go file whatever its build tags, tests
// included.
func moduleImports(t *testing.T) map[importEdge]bool {
	t.Helper()
	module := modulePath(t, repoRoot(t))
	edges := map[importEdge]bool{}
	fset := token.NewFileSet()
	for _, f := range repoFiles(t) {
		if !f.isGo() {
			continue
		}
		parsed, err := parser.ParseFile(fset, f.abs, nil, parser.ImportsOnly|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range parsed.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if to, ok := strings.CutPrefix(imp, module+"/"); ok {
				edges[importEdge{from: path.Dir(f.rel), to: to}] = true
			}
		}
	}
	return edges
}

// topFolder is the first element of a slash-separated path.
func topFolder(p string) string {
	folder, _, _ := strings.Cut(p, "/")
	return folder
}

// TestLayers counts the imports that go against the layers' order (to a
// folder of the importer's layer or one above it) and fails when there
// are more than maxAgainstLayers, or when a folder holding Go code has
// no layer.
func TestLayers(t *testing.T) {
	var against []string
	unplaced := map[string]bool{}
	for e := range moduleImports(t) {
		from, to := topFolder(e.from), topFolder(e.to)
		if from == to {
			continue
		}
		lf, lt := layerOf(from), layerOf(to)
		for _, f := range []string{from, to} {
			if layerOf(f) < 0 && !unplaced[f] {
				unplaced[f] = true
				t.Errorf("folder %s holds Go code but has no place in the layers: add it to layers", f)
			}
		}
		if lf >= 0 && lt >= 0 && lt >= lf {
			against = append(against, fmt.Sprintf("%s → %s", e.from, e.to))
		}
	}
	sort.Strings(against)
	t.Logf("%d imports against the layers' order:", len(against))
	for _, a := range against {
		t.Logf("  %s", a)
	}
	if len(against) > maxAgainstLayers {
		t.Errorf("%d imports go against the layers' order, at most %d may: %s",
			len(against), maxAgainstLayers, strings.Join(against, "; "))
	}
}
