package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// writeBundle writes solve's json output: the run as a bundle (the format
// `dashboard import` and the server read), with the aggregates over
// replications when there are some. Each trace carries the panels of its
// final estimate when the instance draws them, as on the dashboard.
func writeBundle(w io.Writer, run spec.Run, inst scenarios.Instance, traces []traceOut, aggs []aggregateOut, interrupted bool) error {
	info := inst.Info()
	b := &bundle.Bundle{
		Version: bundle.ProgramVersion(),
		Status:  store.StatusDone,
		Ended:   time.Now(),
		Spec:    run,
		Info:    bundle.Info{Dim: info.Dim, Samples: info.Samples, Blocks: info.Blocks, FStar: info.FStar},
	}
	if len(info.Panels) > 0 {
		p, err := json.Marshal(sanitize(info.Panels))
		if err != nil {
			return fmt.Errorf("the instance's panels: %w", err)
		}
		b.Info.Panels = p
	}
	rp, hasPanels := inst.(scenarios.ResultPanels)
	for _, t := range traces {
		sum := t.Summary
		bt := bundle.Trace{Algo: t.Algo, Replication: t.Replication, Seed: t.Seed, Status: sum.Status, Summary: &sum, Records: t.Records}
		switch sum.Status {
		case solver.StatusFailed:
			b.Status = store.StatusFailed
		case solver.StatusCancelled:
			if b.Status != store.StatusFailed {
				b.Status = store.StatusCancelled
			}
		}
		if hasPanels && len(t.X) > 0 {
			if p, err := resultPanels(rp, t.X); err != nil {
				bt.PanelsError = "the final estimate's panels: " + err.Error()
			} else if p != nil {
				bt.Panels = p
			}
		}
		b.Traces = append(b.Traces, bt)
	}
	if interrupted && b.Status == store.StatusDone {
		b.Status = store.StatusCancelled
	}
	if aggs != nil {
		a, err := json.Marshal(aggs)
		if err != nil {
			return fmt.Errorf("the aggregates: %w", err)
		}
		b.Aggregates = a
	}
	return bundle.Encode(w, b)
}

// resultPanels computes a final estimate's panels as JSON, turning a panic
// into an error as the session layer does.
func resultPanels(rp scenarios.ResultPanels, x []float64) (_ json.RawMessage, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	p, err := rp.ResultPanels(x)
	if err != nil || len(p) == 0 {
		return nil, err
	}
	return json.Marshal(sanitize(p))
}
