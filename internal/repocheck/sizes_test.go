package repocheck

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"strings"
	"testing"
)

// The longest a file or function may be, in lines.
const (
	maxGoFileLines   = 800 // a hand-written non-test Go file
	maxFunctionLines = 80  // a function or method of one
	maxDocLines      = 600 // a Markdown page under docs/
	maxReadmeLines   = 150 // README.md
)

// lineCount is the number of lines of src, a last line without its
// newline counted too.
func lineCount(src []byte) int {
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// goSource is a Go file and its source.
type goSource struct {
	repoFile
	src []byte
}

// handWritten returns the non-test Go files no program wrote, in the
// walk's order.
func handWritten(t *testing.T) []goSource {
	t.Helper()
	var files []goSource
	for _, f := range repoFiles(t) {
		if !f.isGo() || f.isTest() {
			continue
		}
		src, err := os.ReadFile(f.abs)
		if err != nil {
			t.Fatal(err)
		}
		if !isGenerated(src) {
			files = append(files, goSource{f, src})
		}
	}
	return files
}

func TestFileSizes(t *testing.T) {
	for _, f := range handWritten(t) {
		if n := lineCount(f.src); n > maxGoFileLines {
			t.Errorf("%s: %d lines, more than %d: split it by what its parts do", f.rel, n, maxGoFileLines)
		}
	}
}

func TestFunctionSizes(t *testing.T) {
	fset := token.NewFileSet()
	for _, f := range handWritten(t) {
		parsed, err := parser.ParseFile(fset, f.rel, f.src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range parsed.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			if n := end.Line - start.Line + 1; n > maxFunctionLines {
				t.Errorf("%s: %s is %d lines, more than %d", start, funcName(fn), n, maxFunctionLines)
			}
		}
	}
}

// funcName is a function's name, a method's with its receiver's type.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fn.Name.Name
		}
		return fn.Name.Name
	}
}

func TestDocSizes(t *testing.T) {
	for _, f := range repoFiles(t) {
		limit := 0
		switch {
		case f.rel == "README.md":
			limit = maxReadmeLines
		case strings.HasPrefix(f.rel, "docs/") && path.Ext(f.rel) == ".md":
			limit = maxDocLines
		default:
			continue
		}
		src, err := os.ReadFile(f.abs)
		if err != nil {
			t.Fatal(err)
		}
		if n := lineCount(src); n > limit {
			t.Errorf("%s: %d lines, more than %d: move what is history to a dated page beside it", f.rel, n, limit)
		}
	}
}
