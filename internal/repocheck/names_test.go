package repocheck

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// goFileName matches a Go file's name, bare or after a path: conv.go,
// models/ops/conv.go. The name starts with a letter or digit (a bare
// "_test.go" is a suffix, not a file), and the character before it must
// not continue a name or a path.
var goFileName = regexp.MustCompile(`(?:^|[^\w./-])((?:[\w-]+/)*[A-Za-z0-9][\w-]*\.go)\b`)

// url matches a web address, whose path names files of other repositories.
var url = regexp.MustCompile(`\b[a-z]+://\S+`)

// elsewhere lists the .go files of other projects that comments or pages
// name on purpose, each with the project it belongs to.
var elsewhere = map[string]string{
	"cu.go":           "gorgonia.org/cu",
	"cuda.go":         "gorgonia.org/gorgonia",
	"device_cuda.go":  "gorgonia.org/gorgonia",
	"op_math_cuda.go": "gorgonia.org/gorgonia",
}

// namedGoFiles returns the .go files text names, web addresses left out.
func namedGoFiles(text string) []string {
	text = url.ReplaceAllString(text, " ")
	var names []string
	for _, m := range goFileName.FindAllStringSubmatch(text, -1) {
		names = append(names, m[1])
	}
	return names
}

// TestNamedGoFilesExist fails when a comment of a hand-written Go file,
// or a Markdown page, names a .go file no file of the repository has the
// name of. Strings in code are not read: only comments say where to look.
func TestNamedGoFilesExist(t *testing.T) {
	files := repoFiles(t)
	exists := map[string]bool{}
	for _, f := range files {
		exists[path.Base(f.rel)] = true
	}
	missing := map[string][]string{} // name → where it is named
	check := func(where, text string) {
		for _, name := range namedGoFiles(text) {
			base := path.Base(name)
			if !exists[base] && elsewhere[base] == "" {
				missing[name] = append(missing[name], where)
			}
		}
	}
	fset := token.NewFileSet()
	for _, f := range files {
		switch {
		case f.isGo():
			src, err := os.ReadFile(f.abs)
			if err != nil {
				t.Fatal(err)
			}
			if isGenerated(src) {
				continue
			}
			parsed, err := parser.ParseFile(fset, f.rel, src, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, group := range parsed.Comments {
				for _, c := range group.List {
					check(fset.Position(c.Pos()).String(), c.Text)
				}
			}
		case strings.HasSuffix(f.rel, ".md"):
			src, err := os.ReadFile(f.abs)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(src), "\n") {
				check(fmt.Sprintf("%s:%d", f.rel, i+1), line)
			}
		}
	}
	names := make([]string, 0, len(missing))
	for name := range missing {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Errorf("%s is named but no file of the repository has that name: %s", name, strings.Join(missing[name], ", "))
	}
}

func TestNamedGoFileMatches(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"see conv.go and models/ops/pool.go.", []string{"conv.go", "models/ops/pool.go"}},
		{"(gemm.go, directconv.go)", []string{"gemm.go", "directconv.go"}},
		{"`x_test.go`, a _test.go file", []string{"x_test.go"}},
		{"go.mod, go test ./..., gorgonia.org/gorgonia", nil},
		{"https://github.com/a/b/blob/main/c.go", nil},
		{"a.golang b.gopher", nil},
	} {
		got := namedGoFiles(c.text)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("namedGoFiles(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
