package experiment

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mtsgd/mtsgd/data/files"
)

// TaskCount is how many tasks a run of s has, as far as is known before
// its data load (Dataset.Tasks); 0 where it is not.
func TaskCount(s Settings) int {
	if d, ok := datasets.Lookup(s.Dataset); ok && d.Tasks != nil {
		return d.Tasks(s)
	}
	return 0
}

// celebATasks counts the attributes of CelebA's -tasks: N, or the names
// listed.
func celebATasks(s Settings) int {
	spec := strings.TrimSpace(s.Tasks)
	if spec == "" {
		return 0
	}
	if n, err := strconv.Atoi(spec); err == nil {
		return max(n, 0)
	}
	return len(strings.Split(spec, ","))
}

// filesTasks counts the tasks of a run on files: those its spec records
// (a restored run's), else those its directory's tasks.json names,
// which is read before the data; 0 where it cannot be read (loading
// says why).
func filesTasks(s Settings) int {
	if s.Files == nil {
		return 0
	}
	if len(s.Files.Tasks) > 0 {
		return len(s.Files.Tasks)
	}
	desc, err := files.ReadDescription(filepath.Join(s.Files.Dir, files.TasksFile))
	if err != nil {
		return 0
	}
	return len(desc.Tasks)
}

// checkFits refuses settings whose method cannot train their ensemble
// (Method.Fits): tasks is the run's task count, 0 where not known yet.
func (s Settings) checkFits(method Method, tasks int) error {
	if method.Fits == nil {
		return nil
	}
	if err := method.Fits(s, tasks); err != nil {
		return fmt.Errorf("-method %s with -particles %d on %s (%d tasks): %w", method.Name, s.Particles, s.Dataset, tasks, err)
	}
	return nil
}

// CheckFits refuses a method that cannot train a run of the data set
// of s by its task count alone, whatever the particles (a protocol's
// runs leave such a method out).
func (s Settings) CheckFits(method string) error {
	m, err := LookupMethod(method)
	if err != nil || m.Fits == nil {
		return err
	}
	n := TaskCount(s)
	s.Particles = 0
	if err := m.Fits(s, n); err != nil {
		return fmt.Errorf("-method %s on %s (%d tasks): %w", method, s.Dataset, n, err)
	}
	return nil
}
