package experiment

import (
	"fmt"
	"strconv"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/engine"
)

// The named choices of Settings are typed values: a name is read once,
// where settings are made (a command's flags, a plan) or decoded (a
// checkpoint), and everything below compares values, never names. The
// zero value of each is the choice a settings value leaves unnamed,
// which reads as the default and encodes as "" (omitted where the field
// is omitempty), so that settings decode and encode back byte for byte.

// choiceNames are the names of a choice's values, by value; the zero
// value's is "".
type choiceNames []string

// value returns the value called name, or false.
func (n choiceNames) value(name string) (int, bool) {
	for i, v := range n {
		if v == name {
			return i, true
		}
	}
	return 0, false
}

// name is the name of v; a value outside the table, which only a
// programmer's conversion makes, is shown as typ(v).
func (n choiceNames) name(typ string, v uint8) string {
	if int(v) < len(n) {
		return n[v]
	}
	return typ + "(" + strconv.Itoa(int(v)) + ")"
}

// ScoreScale is Settings.ScoreScale: engine.ScoreScale, or ScaleUnnamed,
// which is the mean (settings from before the choice existed).
type ScoreScale uint8

// The score scales, in the order of engine.ScoreScales after
// ScaleUnnamed.
const (
	ScaleUnnamed ScoreScale = iota
	ScaleMean
	ScaleSum
	ScaleNormalized
)

// ParseScoreScale returns the scale engine.ScoreScales calls name; ""
// is ScaleUnnamed.
func ParseScoreScale(name string) (ScoreScale, error) {
	if name == "" {
		return ScaleUnnamed, nil
	}
	v, err := engine.ParseScoreScale(name)
	if err != nil {
		return ScaleUnnamed, fmt.Errorf("-score-scale: %w", err)
	}
	return ScoreScale(v) + 1, nil
}

// Engine is the scale as the engine applies it.
func (s ScoreScale) Engine() engine.ScoreScale {
	if s == ScaleUnnamed {
		return engine.ScoreMean
	}
	return engine.ScoreScale(s - 1)
}

func (s ScoreScale) String() string {
	if s == ScaleUnnamed {
		return ""
	}
	return s.Engine().String()
}

// MarshalText writes the scale's name.
func (s ScoreScale) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a name ParseScoreScale accepts.
func (s *ScoreScale) UnmarshalText(b []byte) (err error) {
	*s, err = ParseScoreScale(string(b))
	return err
}

// KernelSpace is Settings.KernelOn: engine.KernelSpace, or
// KernelUnnamed, which is the parameters.
type KernelSpace uint8

// The kernel spaces, in the order of engine.KernelSpaces after
// KernelUnnamed.
const (
	KernelUnnamed KernelSpace = iota
	KernelOnParams
	KernelOnOutputs
)

// ParseKernelSpace returns the space engine.KernelSpaces calls name; ""
// is KernelUnnamed.
func ParseKernelSpace(name string) (KernelSpace, error) {
	if name == "" {
		return KernelUnnamed, nil
	}
	v, err := engine.ParseKernelSpace(name)
	if err != nil {
		return KernelUnnamed, fmt.Errorf("-kernel-on: %w", err)
	}
	return KernelSpace(v) + 1, nil
}

// Engine is the space as the engine places the kernels.
func (k KernelSpace) Engine() engine.KernelSpace {
	if k == KernelUnnamed {
		return engine.KernelParams
	}
	return engine.KernelSpace(k - 1)
}

func (k KernelSpace) String() string {
	if k == KernelUnnamed {
		return ""
	}
	return k.Engine().String()
}

// MarshalText writes the space's name.
func (k KernelSpace) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a name ParseKernelSpace accepts.
func (k *KernelSpace) UnmarshalText(b []byte) (err error) {
	*k, err = ParseKernelSpace(string(b))
	return err
}

// UTerms is Settings.UTerms, the terms of MT-SGD's U.
type UTerms uint8

const (
	UTermsUnnamed UTerms = iota // the four terms
	UTermsFull                  // Equation Uij-1, four terms
	UTermsFirst                 // the kernel-weighted score products only, as the authors' code
)

var uTermsNames = choiceNames{"", "full", "first"}

// ParseUTerms returns the terms called name; "" is UTermsUnnamed.
func ParseUTerms(name string) (UTerms, error) {
	v, ok := uTermsNames.value(name)
	if !ok {
		return UTermsUnnamed, fmt.Errorf("-u-terms must be full or first, got %q", name)
	}
	return UTerms(v), nil
}

// FirstOnly reports whether U keeps its first term alone.
func (u UTerms) FirstOnly() bool { return u == UTermsFirst }

func (u UTerms) String() string { return uTermsNames.name("UTerms", uint8(u)) }

// MarshalText writes the terms' name.
func (u UTerms) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads a name ParseUTerms accepts.
func (u *UTerms) UnmarshalText(b []byte) (err error) {
	*u, err = ParseUTerms(string(b))
	return err
}

// UpdateOrder is Settings.Order: how a step moves trunks and heads.
type UpdateOrder uint8

const (
	OrderUnnamed    UpdateOrder = iota // joint
	OrderJoint                         // one gradient evaluation moves trunks and heads
	OrderHeadsFirst                    // the heads move first, and the trunks' task gradients go through the moved heads
)

var orderNames = choiceNames{"", "joint", "heads-first"}

// ParseUpdateOrder returns the order called name; "" is OrderUnnamed.
func ParseUpdateOrder(name string) (UpdateOrder, error) {
	v, ok := orderNames.value(name)
	if !ok {
		return OrderUnnamed, fmt.Errorf("-order must be joint or heads-first, got %q", name)
	}
	return UpdateOrder(v), nil
}

// HeadsFirst reports whether the heads move first.
func (o UpdateOrder) HeadsFirst() bool { return o == OrderHeadsFirst }

func (o UpdateOrder) String() string { return orderNames.name("UpdateOrder", uint8(o)) }

// MarshalText writes the order's name.
func (o UpdateOrder) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads a name ParseUpdateOrder accepts.
func (o *UpdateOrder) UnmarshalText(b []byte) (err error) {
	*o, err = ParseUpdateOrder(string(b))
	return err
}

// OptimizerKind is Settings.Optimizer. OptimizerUnnamed makes no run:
// Check refuses it.
type OptimizerKind uint8

const (
	OptimizerUnnamed OptimizerKind = iota
	OptimizerSGD                   // SGD with Settings.Momentum
	OptimizerAdam
)

var optimizerNames = choiceNames{"", "sgd", "adam"}

// ParseOptimizer returns the optimiser called name; "" is
// OptimizerUnnamed.
func ParseOptimizer(name string) (OptimizerKind, error) {
	v, ok := optimizerNames.value(name)
	if !ok {
		return OptimizerUnnamed, fmt.Errorf("-optimizer must be adam or sgd, got %q", name)
	}
	return OptimizerKind(v), nil
}

func (o OptimizerKind) String() string { return optimizerNames.name("OptimizerKind", uint8(o)) }

// MarshalText writes the optimiser's name.
func (o OptimizerKind) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads a name ParseOptimizer accepts.
func (o *OptimizerKind) UnmarshalText(b []byte) (err error) {
	*o, err = ParseOptimizer(string(b))
	return err
}

// ScheduleKind is Settings.Schedule, the learning-rate schedule.
// ScheduleUnnamed makes no run: Check refuses it.
type ScheduleKind uint8

const (
	ScheduleUnnamed     ScheduleKind = iota
	ScheduleMultiStep                // the rate times Gamma at each of Milestones
	ScheduleExponential              // the rate times Gamma every Every epochs
	ScheduleConstant
)

var scheduleNames = choiceNames{"", "multistep", "exponential", "constant"}

// ParseSchedule returns the schedule called name; "" is
// ScheduleUnnamed.
func ParseSchedule(name string) (ScheduleKind, error) {
	v, ok := scheduleNames.value(name)
	if !ok {
		return ScheduleUnnamed, fmt.Errorf("-lr-schedule must be multistep, exponential or constant, got %q", name)
	}
	return ScheduleKind(v), nil
}

func (k ScheduleKind) String() string { return scheduleNames.name("ScheduleKind", uint8(k)) }

// MarshalText writes the schedule's name.
func (k ScheduleKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a name ParseSchedule accepts.
func (k *ScheduleKind) UnmarshalText(b []byte) (err error) {
	*k, err = ParseSchedule(string(b))
	return err
}

// Dtype is Settings.Dtype, the number type of the graphs. DtypeUnnamed
// makes no run: Check refuses it.
type Dtype uint8

const (
	DtypeUnnamed Dtype = iota
	DtypeFloat32
	DtypeFloat64
)

var dtypeNames = choiceNames{"", "float32", "float64"}

// ParseDtype returns the number type called name; "" is DtypeUnnamed.
func ParseDtype(name string) (Dtype, error) {
	v, ok := dtypeNames.value(name)
	if !ok {
		return DtypeUnnamed, fmt.Errorf("-dtype must be float32 or float64, got %q", name)
	}
	return Dtype(v), nil
}

// Tensor is the graphs' tensor.Dtype: float64 for DtypeFloat64, else
// float32.
func (d Dtype) Tensor() tensor.Dtype {
	if d == DtypeFloat64 {
		return tensor.Float64
	}
	return tensor.Float32
}

func (d Dtype) String() string { return dtypeNames.name("Dtype", uint8(d)) }

// MarshalText writes the number type's name.
func (d Dtype) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a name ParseDtype accepts.
func (d *Dtype) UnmarshalText(b []byte) (err error) {
	*d, err = ParseDtype(string(b))
	return err
}
