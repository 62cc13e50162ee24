package main

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
)

// routine is an assembly routine: its name and its Go signature, from the
// "// func" line above its TEXT.
type routine struct {
	file, name, signature string
}

var (
	funcLine = regexp.MustCompile(`^// func (\w+)(\(.*)$`)
	textLine = regexp.MustCompile(`^TEXT ·(\w+)\(SB\)`)
)

// routinesOf lists the routines of an assembly file: each TEXT must have
// a "// func" line of its name above it, with only comments between.
func routinesOf(file, text string) ([]routine, error) {
	var found []routine
	var last *routine
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := funcLine.FindStringSubmatch(line); m != nil {
			last = &routine{file: file, name: m[1], signature: m[2]}
			continue
		}
		if m := textLine.FindStringSubmatch(line); m != nil {
			if last == nil || last.name != m[1] {
				return nil, fmt.Errorf("%s:%d: TEXT ·%s without a \"// func %s(...)\" line above it", file, n, m[1], m[1])
			}
			found = append(found, *last)
			last = nil
			continue
		}
		if !strings.HasPrefix(line, "//") {
			last = nil
		}
	}
	return found, sc.Err()
}

// stubs returns the Go file that declares the routines for the assembly.
func stubs(routines []routine) string {
	var b strings.Builder
	b.WriteString(header + "//go:build !purego\n\npackage asm\n\n")
	b.WriteString("// built says whether this build has the assembly: amd64 without -tags\n// purego.\nconst built = true\n")
	file := ""
	for _, r := range routines {
		if r.file != file {
			file = r.file
			fmt.Fprintf(&b, "\n// %s\n", file)
		}
		fmt.Fprintf(&b, "\n//go:noescape\nfunc %s%s\n", r.name, r.signature)
	}
	return b.String()
}

// others returns the Go file that stands in for the routines where there
// is no assembly: each panics, as none may be called there.
func others(routines []routine) string {
	var b strings.Builder
	b.WriteString(header + "//go:build !amd64 || purego\n\npackage asm\n\n")
	b.WriteString("// built says whether this build has the assembly: amd64 without -tags\n// purego.\nconst built = false\n\n")
	b.WriteString("// noAssembly is what a routine below says if it is called: every switch\n// that would call one is off in this build (cpu.go).\nconst noAssembly = \"asm: no assembly in this build\"\n")
	for _, r := range routines {
		fmt.Fprintf(&b, "\nfunc %s%s {\n\tpanic(noAssembly)\n}\n", r.name, r.signature)
	}
	return b.String()
}
