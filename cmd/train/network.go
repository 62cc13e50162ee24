package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/multimnist"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/particles"
)

// runNetwork handles the data sets that train networks.
func runNetwork(ctx context.Context, o Options, rule particles.Rule) error {
	train, test, err := loadData(o)
	if err != nil {
		return err
	}
	switch {
	case o.Stats:
		for _, d := range []data.Dataset{train, test} {
			if err := writeStats(os.Stdout, d); err != nil {
				return err
			}
		}
		return nil
	case o.Preview != "":
		err := atomicfile.Write(o.Preview, 0o644, func(w io.Writer) error { return writePreview(w, train, 16, o.Seed) })
		if err != nil {
			return err
		}
		log.WithField("file", o.Preview).Info("wrote preview")
		return nil
	}
	return errors.New("network training is not built yet")
}

// loadData reads or builds the training and test sets of o.Dataset.
func loadData(o Options) (train, test data.Dataset, err error) {
	dir, err := data.Dir(o.DataDir)
	if err != nil {
		return nil, nil, err
	}
	v, ok := multimnist.Lookup(o.Dataset)
	if !ok {
		return nil, nil, fmt.Errorf("-dataset %q is not a network data set", o.Dataset)
	}
	start := time.Now()
	tr, te, err := v.Load(dir, o.Seed)
	if err != nil {
		return nil, nil, err
	}
	log.WithFields(log.Fields{"train": tr.Len(), "test": te.Len(), "seconds": fmt.Sprintf("%.1f", time.Since(start).Seconds())}).
		Info("built " + o.Dataset)
	return tr, te, nil
}
