package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mtsgd/mtsgd/experiment"
)

// A method spec names what a run trains: a train -method NAME, or
// NAME:PRESET for MT-SGD with one of train's presets, optionally followed
// by settings of that method's own that replace the comparison's:
// @lr=RATE (its learning rate) and @scale=mean|sum|normalized (its score
// scale, as train's -score-scale; the repulsion weights then follow the
// scale, as they do in train), @repel (train's -repel: the method's
// trunk directions drive an SVGD step across the particles) and
// @PARAM=VALUE for each of the method's own parameters (train's
// -METHOD-PARAM). For example moo-svgd@scale=normalized,
// mtsgd:authors-params@lr=0.01 or cagrad@c=0.2@repel. The whole spec is
// the method's name in the tables; its run directories write ":" as "-",
// "@lr=" as "-lr", "@scale=" as "-", "@repel" as "-repel" and
// "@PARAM=" as "-PARAM" (linear@lr=0.1 seed 1: linear-lr0.1-seed1).
type methodSpec struct {
	Name, Preset string
	LR           float64               // 0: the comparison's
	ScoreScale   experiment.ScoreScale // unnamed: the method's
	Repel        bool
	Params       map[string]float64 // the method's own, where given
}

// parseSpec reads a method spec and checks its parts against the
// registries.
func parseSpec(spec string) (methodSpec, error) {
	base, opts, _ := strings.Cut(spec, "@")
	var m methodSpec
	name, preset, hasPreset := strings.Cut(base, ":")
	method, err := experiment.LookupMethod(name)
	if err != nil {
		return m, err
	}
	m.Name = name
	if hasPreset {
		if _, err := experiment.LookupPreset(preset); err != nil {
			return m, fmt.Errorf("%s: %w", spec, err)
		}
		m.Preset = preset
	}
	if !strings.Contains(spec, "@") {
		return m, nil
	}
	for _, opt := range strings.Split(opts, "@") {
		key, value, _ := strings.Cut(opt, "=")
		switch {
		case key == "lr" && m.LR == 0:
			r, err := strconv.ParseFloat(value, 64)
			if err != nil || !(r > 0) || math.IsInf(r, 0) {
				return m, fmt.Errorf("%s: @lr=%s is not a positive learning rate", spec, value)
			}
			m.LR = r
		case key == "scale" && m.ScoreScale == experiment.ScaleUnnamed:
			scale, err := experiment.ParseScoreScale(value)
			if err != nil || scale == experiment.ScaleUnnamed {
				return m, fmt.Errorf("%s: @scale=%s is not mean, sum or normalized", spec, value)
			}
			m.ScoreScale = scale
		case opt == "repel" && !m.Repel:
			m.Repel = true
		case m.Params[key] == 0 && hasParam(method, key):
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return m, fmt.Errorf("%s: @%s is not a number", spec, opt)
			}
			if m.Params == nil {
				m.Params = map[string]float64{}
			}
			m.Params[key] = v
		default:
			return m, fmt.Errorf("%s: @%s is not @lr=RATE, @scale=SCALE, @repel or one of %s's parameters @NAME=VALUE, each at most once", spec, opt, name)
		}
	}
	s := experiment.Settings{Method: name, Repel: m.Repel, MethodParams: m.Params}
	if err := s.CheckMethodOptions(); err != nil {
		return m, fmt.Errorf("%s: %w", spec, err)
	}
	return m, nil
}

// hasParam reports whether key names one of m's own parameters.
func hasParam(m experiment.Method, key string) bool {
	_, ok := m.Param(key)
	return ok
}

// CheckSpec checks a method spec: its method and preset registered, its
// own settings well formed.
func CheckSpec(spec string) error {
	_, err := parseSpec(spec)
	return err
}

// mustSpec parses a spec that CheckSpec or Read has checked.
func mustSpec(spec string) methodSpec {
	m, err := parseSpec(spec)
	if err != nil {
		panic(fmt.Sprintf("compare: unchecked method spec: %v", err))
	}
	return m
}

// apply writes the spec's own settings over s.
func (m methodSpec) apply(s *experiment.Settings) {
	if m.LR > 0 {
		s.LR = m.LR
	}
	if m.ScoreScale != experiment.ScaleUnnamed {
		s.ScoreScale = m.ScoreScale
		s.Repulsion, s.HeadRepulsion = experiment.AutoRepulsion, experiment.AutoRepulsion
	}
	s.Repel = m.Repel
	if len(m.Params) > 0 {
		s.MethodParams = m.Params
	}
}

// specDir is a spec as run directories write it.
var specDir = strings.NewReplacer(":", "-", "@lr=", "-lr", "@scale=", "-", "@repel", "-repel", "@", "-", "=", "")
