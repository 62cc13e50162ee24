package celeba

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// attributeText is a small attribute file of n images and three
// attributes.
func attributeText(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\nA B C\n", n)
	for i := range n {
		fmt.Fprintf(&b, "%06d.jpg 1 -1 %d\n", i+1, 1-2*(i%2))
	}
	return b.String()
}

// FuzzAttributes checks that no attribute file makes the parser panic or
// accept rows that disagree with its header: one row per image line 1
// counts, one value (0 or 1) per attribute, plain .jpg names.
func FuzzAttributes(f *testing.F) {
	f.Add([]byte(attributeText(3)))
	f.Add([]byte(attributeText(0)))
	f.Add([]byte("2\nA\n000001.jpg 1\n\n000002.jpg -1\n"))
	f.Add([]byte("1\nA B\n../x.jpg 1 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		names, files, values, err := parseAttributes(bytes.NewReader(b), int64(len(b)), "attr")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "attr: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(values) != len(files)*len(names) {
			t.Fatalf("%d values for %d images of %d attributes", len(values), len(files), len(names))
		}
		for _, v := range values {
			if v > 1 {
				t.Fatalf("value %d", v)
			}
		}
		for _, name := range files {
			if !strings.HasSuffix(name, ".jpg") || filepath.Base(name) != name {
				t.Fatalf("image name %q", name)
			}
		}
	})
}

// FuzzPartition checks that no partition file makes the parser panic or
// give a split other than 0, 1 or 2, or none, to a listed image.
func FuzzPartition(f *testing.F) {
	files := []string{"000001.jpg", "000002.jpg", "000003.jpg"}
	f.Add([]byte("000001.jpg 0\n000002.jpg 1\n000003.jpg 2\n"))
	f.Add([]byte("000001.jpg 0\n\n000002.jpg 1\n000003.jpg 2\n000004.jpg 0\n"))
	f.Add([]byte("000001.jpg 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		split, err := parsePartition(bytes.NewReader(b), "part", files)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "part: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(split) != len(files) {
			t.Fatalf("%d splits for %d files", len(split), len(files))
		}
		for _, s := range split {
			if s < 0 || s > 2 {
				t.Fatalf("split %d", s)
			}
		}
	})
}
