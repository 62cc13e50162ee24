// Package celeba reads CelebA (Liu, Luo, Wang & Tang, 2015), the face
// attribute data set of the paper's large experiment, in its official
// layout under DATA/celeba:
//
//	img_align_celeba/NNNNNN.jpg  the aligned 178×218 face images
//	list_attr_celeba.txt         line 1: the image count; line 2: the 40
//	                             attribute names; then per image its file
//	                             name and 40 values, −1 or 1
//	list_eval_partition.txt      per image its file name and 0, 1 or 2
//	                             (train, validation, test)
//
// Each chosen attribute is a binary classification task (class 1: the
// attribute is present). Images are decoded by parallel workers when the
// data set is loaded, resized to 64×64 with bilinear interpolation
// (golang.org/x/image/draw) from the whole image, as the authors' loader
// does, and kept as bytes (12 KiB per image); they are scaled to [0, 1]
// when read, channels first.
package celeba

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/image/draw"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/regfile"
)

// Name is the data set's name for -dataset.
const Name = "celeba"

// Side is the side of the images after resizing.
const Side = 64

// Files of the official layout.
const (
	Subdir        = "celeba"
	ImageDir      = "img_align_celeba"
	AttributeFile = "list_attr_celeba.txt"
	PartitionFile = "list_eval_partition.txt"
)

// Attributes are the 40 attribute names of the official
// list_attr_celeba.txt, in its order; Load reads the names from the file
// itself, and tables that quote the paper's per-attribute figures match
// them by these.
var Attributes = strings.Fields(`5_o_Clock_Shadow Arched_Eyebrows Attractive Bags_Under_Eyes Bald Bangs Big_Lips Big_Nose
Black_Hair Blond_Hair Blurry Brown_Hair Bushy_Eyebrows Chubby Double_Chin Eyeglasses Goatee Gray_Hair Heavy_Makeup
High_Cheekbones Male Mouth_Slightly_Open Mustache Narrow_Eyes No_Beard Oval_Face Pale_Skin Pointy_Nose Receding_Hairline
Rosy_Cheeks Sideburns Smiling Straight_Hair Wavy_Hair Wearing_Earrings Wearing_Hat Wearing_Lipstick Wearing_Necklace
Wearing_Necktie Young`)

// Set is one split. It implements data.Dataset.
type Set struct {
	name   string
	tasks  []data.Task
	pixels []byte // Len()·Side·Side·3, each image row-major RGB
	labels []byte // Len()·len(tasks), 0 or 1
}

func (s *Set) Name() string       { return s.name }
func (s *Set) Tasks() []data.Task { return s.tasks }
func (s *Set) InputShape() []int  { return []int{3, Side, Side} }
func (s *Set) Len() int           { return len(s.labels) / len(s.tasks) }

// Example writes image i, channels first and scaled to [0, 1], into x and
// its attributes (0 or 1) into y.
func (s *Set) Example(i int, x, y []float32) error {
	if i < 0 || i >= s.Len() {
		return fmt.Errorf("example %d out of range [0, %d)", i, s.Len())
	}
	const plane = Side * Side
	img := s.pixels[i*plane*3 : (i+1)*plane*3]
	for p := range plane {
		for c := range 3 {
			x[c*plane+p] = float32(img[p*3+c]) / 255
		}
	}
	for j := range s.tasks {
		y[j] = float32(s.labels[i*len(s.tasks)+j])
	}
	return nil
}

// Splits are the three parts of the data set.
type Splits struct {
	Train, Valid, Test *Set
}

// Options choose what to load.
type Options struct {
	// Tasks is the number of attributes to use, the first in the file's
	// order ("10", the paper's main table), or a comma-separated list of
	// attribute names; empty means all.
	Tasks string
	// TrainLimit and TestLimit keep the first N images of the training
	// split, and of the validation and test splits, in file order; 0
	// keeps all. The paper's 40,000-image protocol is TrainLimit 40000.
	TrainLimit, TestLimit int
	// Workers decode images in parallel; 0 means GOMAXPROCS.
	Workers int
}

// Load reads dataDir/celeba.
func Load(dataDir string, o Options) (*Splits, error) {
	dir := filepath.Join(dataDir, Subdir)
	names, files, values, err := readAttributes(filepath.Join(dir, AttributeFile))
	if err != nil {
		return nil, err
	}
	chosen, err := chooseTasks(names, o.Tasks)
	if err != nil {
		return nil, err
	}
	part, err := readPartition(filepath.Join(dir, PartitionFile), files)
	if err != nil {
		return nil, err
	}
	tasks := make([]data.Task, len(chosen))
	for j, a := range chosen {
		tasks[j] = data.Task{Name: names[a], Kind: data.Classification, Classes: 2, ClassNames: []string{"no", "yes"}}
	}
	var sp Splits
	for split, dst := range []**Set{&sp.Train, &sp.Valid, &sp.Test} {
		limit := o.TestLimit
		if split == 0 {
			limit = o.TrainLimit
		}
		var rows []int
		for r := range files {
			if part[r] == split && (limit == 0 || len(rows) < limit) {
				rows = append(rows, r)
			}
		}
		s := &Set{name: Name + "/" + []string{"train", "valid", "test"}[split], tasks: tasks}
		for _, r := range rows {
			for _, a := range chosen {
				s.labels = append(s.labels, values[r*len(names)+a])
			}
		}
		if s.pixels, err = decodeAll(filepath.Join(dir, ImageDir), files, rows, o.Workers); err != nil {
			return nil, err
		}
		*dst = s
	}
	return &sp, nil
}

// missing wraps fs.ErrNotExist errors in data.ErrMissing with how to get
// the data.
func missing(err error, path string) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s not found. CelebA cannot be fetched by this project: download it from https://mmlab.ie.cuhk.edu.hk/projects/CelebA.html and put img_align_celeba/, %s and %s in %s (set the data directory with -data-dir or $%s)",
			data.ErrMissing, path, AttributeFile, PartitionFile, filepath.Dir(path), data.DirEnv)
	}
	return err
}

// readAttributes parses list_attr_celeba.txt: the attribute names, the
// image file names in order, and their values as 0 or 1, row-major.
func readAttributes(path string) (names, files []string, values []byte, err error) {
	f, st, err := regfile.Open(path)
	if err != nil {
		return nil, nil, nil, missing(err, path)
	}
	defer f.Close()
	return parseAttributes(f, st.Size(), path)
}

// parseAttributes parses an attribute file of size bytes from r. Memory
// is bounded by the file's size: line 1's count must fit in it, no more
// rows than that count are read, and a line is at most 64 KiB.
func parseAttributes(r io.Reader, size int64, path string) (names, files []string, values []byte, err error) {
	sc := bufio.NewScanner(r)
	line := 0
	next := func() ([]string, bool) {
		for sc.Scan() {
			line++
			if fields := strings.Fields(sc.Text()); len(fields) > 0 {
				return fields, true
			}
		}
		return nil, false
	}
	head, ok := next()
	count, convErr := 0, error(nil)
	if ok {
		count, convErr = strconv.Atoi(head[0])
	}
	if !ok || len(head) != 1 || convErr != nil || count < 0 {
		return nil, nil, nil, fmt.Errorf("%s: line 1: %q is not the image count", path, strings.Join(head, " "))
	}
	// A row is a file name and a value, at least 4 bytes with its
	// separator and newline.
	if int64(count) > size/4 {
		return nil, nil, nil, fmt.Errorf("%s: line 1 says %d images, more than a file of %d bytes can list", path, count, size)
	}
	if names, ok = next(); !ok {
		return nil, nil, nil, fmt.Errorf("%s: line 2: the attribute names are missing", path)
	}
	for {
		fields, ok := next()
		if !ok {
			break
		}
		if len(files) == count {
			return nil, nil, nil, fmt.Errorf("%s: line %d: more images than the %d line 1 says", path, line, count)
		}
		if len(fields)-1 != len(names) {
			return nil, nil, nil, fmt.Errorf("%s: line %d: %d values, the header names %d attributes", path, line, len(fields)-1, len(names))
		}
		if filepath.Base(fields[0]) != fields[0] || !strings.HasSuffix(fields[0], ".jpg") {
			return nil, nil, nil, fmt.Errorf("%s: line %d: %q is not an image file name", path, line, fields[0])
		}
		files = append(files, fields[0])
		for a, v := range fields[1:] {
			switch v {
			case "1":
				values = append(values, 1)
			case "-1":
				values = append(values, 0)
			default:
				return nil, nil, nil, fmt.Errorf("%s: line %d: attribute %s is %q, want -1 or 1", path, line, names[a], v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if count != len(files) {
		return nil, nil, nil, fmt.Errorf("%s: line 1 says %d images, the file lists %d", path, count, len(files))
	}
	return names, files, values, nil
}

// readPartition parses list_eval_partition.txt and returns each listed
// image's split, in the order of files.
func readPartition(path string, files []string) ([]int, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return nil, missing(err, path)
	}
	defer f.Close()
	return parsePartition(f, path, files)
}

// parsePartition parses a partition file from r. It keeps the splits of
// the listed files only, so its memory is bounded by theirs, whatever
// the file's length.
func parsePartition(r io.Reader, path string, files []string) ([]int, error) {
	listed := make(map[string]bool, len(files))
	for _, name := range files {
		listed[name] = true
	}
	split := make(map[string]int, len(files))
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 || (fields[1] != "0" && fields[1] != "1" && fields[1] != "2") {
			return nil, fmt.Errorf("%s: line %d: %q is not a file name and 0, 1 or 2", path, line, sc.Text())
		}
		if listed[fields[0]] {
			split[fields[0]] = int(fields[1][0] - '0')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]int, len(files))
	for i, name := range files {
		s, ok := split[name]
		if !ok {
			return nil, fmt.Errorf("%s: no split for %s, which %s lists", path, name, AttributeFile)
		}
		out[i] = s
	}
	return out, nil
}

// CheckTasks checks a -tasks spec as far as it can without the attribute
// file: a count of at least 1, or names that are not empty and each given
// once (a task twice would train and score the same head twice, and its
// name would no longer identify a metrics line). Load checks the names
// and the count against the file.
func CheckTasks(spec string) error {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil
	}
	if n, err := strconv.Atoi(spec); err == nil {
		if n < 1 {
			return fmt.Errorf("-tasks %d: at least 1 attribute is needed", n)
		}
		return nil
	}
	seen := map[string]bool{}
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			return fmt.Errorf("-tasks %q: an empty attribute name", spec)
		case seen[name]:
			return fmt.Errorf("-tasks %q: attribute %s is given twice", spec, name)
		}
		seen[name] = true
	}
	return nil
}

// chooseTasks turns the -tasks spec into attribute indices.
func chooseTasks(names []string, spec string) ([]int, error) {
	if err := CheckTasks(spec); err != nil {
		return nil, err
	}
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = strconv.Itoa(len(names))
	}
	if n, err := strconv.Atoi(spec); err == nil {
		if n < 1 || n > len(names) {
			return nil, fmt.Errorf("-tasks %d: there are %d attributes", n, len(names))
		}
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	var idx []int
	for _, name := range strings.Split(spec, ",") {
		i := slices.Index(names, strings.TrimSpace(name))
		if i < 0 {
			return nil, fmt.Errorf("-tasks: no attribute %q (attributes: %s)", name, strings.Join(names, " "))
		}
		idx = append(idx, i)
	}
	return idx, nil
}

// decodeAll decodes and resizes the images of the given rows in parallel,
// returning their bytes in row order.
func decodeAll(dir string, files []string, rows []int, workers int) ([]byte, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	const size = Side * Side * 3
	out := make([]byte, len(rows)*size)
	jobs := make(chan int)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				path := filepath.Join(dir, files[rows[k]])
				if err := decodeInto(out[k*size:(k+1)*size], path); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for k := range rows {
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	return out, first
}

// maxPixels bounds an image's declared size, far above CelebA's
// (178×218 aligned, a few thousand pixels a side in the wild set).
const maxPixels = 1 << 26

// decodeInto decodes the JPEG at path, resizes it to Side×Side and writes
// its RGB bytes into dst.
func decodeInto(dst []byte, path string) error {
	f, _, err := regfile.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: missing, but %s lists it", path, AttributeFile)
		}
		return err
	}
	defer f.Close()
	// The size its header declares, before decoding allocates it.
	cfg, err := jpeg.DecodeConfig(bufio.NewReader(f))
	if err != nil {
		return fmt.Errorf("%s: not a readable JPEG: %w", path, err)
	}
	if cfg.Width*cfg.Height > maxPixels {
		return fmt.Errorf("%s: a JPEG of %d×%d pixels; CelebA's are 178×218 and at most %d pixels are read", path, cfg.Width, cfg.Height, maxPixels)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	src, err := jpeg.Decode(bufio.NewReader(f))
	if err != nil {
		return fmt.Errorf("%s: not a readable JPEG: %w", path, err)
	}
	small := image.NewRGBA(image.Rect(0, 0, Side, Side))
	draw.BiLinear.Scale(small, small.Bounds(), src, src.Bounds(), draw.Src, nil)
	for p := range Side * Side {
		copy(dst[p*3:p*3+3], small.Pix[p*4:p*4+3])
	}
	return nil
}
