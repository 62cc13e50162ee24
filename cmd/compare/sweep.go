package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/plan"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/experiment"
)

// A sweep is a comparison run cell by cell (plan.Plan): -plan writes
// OUT/plan.json, -cell runs one cell of it, on any machine that shares
// OUT, and -aggregate tabulates the finished cells (plan.Aggregate).

// plan lists the comparison's cells (plan.New).
func (o Options) plan() plan.Plan { return plan.New(o.Comparison) }

// makePlan writes the plan of o into OUT, holding OUT's lock meanwhile so
// as not to replace the plan of a compare running there.
func makePlan(o Options, stdout io.Writer) (plan.Plan, error) {
	release, err := cli.LockRun(o.Out, true)
	if err != nil {
		return plan.Plan{}, err
	}
	defer release()
	p := o.plan()
	if !o.ReplacePlan {
		if err := plan.CheckReplace(o.Out, p); err != nil {
			return plan.Plan{}, cli.Usage(err)
		}
	}
	if err := plan.Write(o.Out, p); err != nil {
		return plan.Plan{}, err
	}
	_, err = fmt.Fprintf(stdout, "%s: %d cells (compare -cell 0..%d -out %s)\n", filepath.Join(o.Out, plan.PlanFile), len(p.Cells), len(p.Cells)-1, o.Out)
	return p, err
}

// runCell runs cell i of the plan in OUT: trains it unless finished,
// resuming an interrupted run. It takes the run directory's lock, not
// OUT's, so that cells run at once on many machines sharing OUT. A final
// cell of the tuned protocol needs its method's search finished.
func runCell(ctx context.Context, o Options, i int) error {
	p, err := plan.Read(o.Out)
	if err != nil {
		return err
	}
	if i < 0 || i >= len(p.Cells) {
		return cli.Usage(fmt.Errorf("-cell %d: the plan in %s has cells 0 to %d", i, o.Out, len(p.Cells)-1))
	}
	c := p.Cells[i]
	if skipped, err := plan.SkipExtension(o.Out, p, c); skipped || err != nil {
		if err != nil {
			return fmt.Errorf("cell %d (%s seed %d): %w", i, c.Method, c.Seed, err)
		}
		return nil
	}
	s, err := plan.CellSettings(o.Out, p, c)
	if err != nil {
		return fmt.Errorf("cell %d (%s seed %d): %w", i, c.Method, c.Seed, err)
	}
	po := options(p, o.Out, o.DataDir, o.Workers)
	po.Device, po.device = o.Device, o.device
	var d *experiment.Data
	if _, err := runOne(ctx, po, s, c, &d); err != nil {
		return fmt.Errorf("cell %d (%s seed %d): %w", i, c.Method, c.Seed, err)
	}
	return nil
}

// options are the comparison flags a plan was made with; out, dataDir
// and workers are the machine's own.
func options(p plan.Plan, out, dataDir string, workers int) Options {
	return Options{Comparison: p.Comparison, Out: out, DataDir: dataDir, Workers: workers}
}
