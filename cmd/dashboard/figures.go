package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
)

// figureArgs are what a figure preset takes from the command line: the
// solve flags the user set explicitly, and the problem parameters.
type figureArgs struct {
	o      solveOpts
	set    map[string]bool
	params map[string]string
}

// figureFunc runs a paper-figure preset and returns its JSON-able data.
type figureFunc func(ctx context.Context, a figureArgs) (any, error)

// figures are the presets whose output is a figure's data rather than a
// list of traces.
var figures = map[string]figureFunc{
	"paper-fig1": func(ctx context.Context, a figureArgs) (any, error) {
		opt := scenarios.Figure1Options{Seed: a.o.seed, Params: spec.Params{}}
		if a.set["replications"] {
			opt.Replications = a.o.reps
		}
		if a.set["iters"] {
			opt.Iters = a.o.iters
		}
		if a.set["eval-every"] {
			opt.EvalEvery = a.o.evalEvery
		}
		for k, v := range a.params {
			opt.Params[k] = v
		}
		return scenarios.Figure1(ctx, opt)
	},
	"paper-fig2": func(ctx context.Context, a figureArgs) (any, error) {
		opt := scenarios.Figure2Options{Seed: a.o.seed, Data: a.params["data"], Split: a.params["split"]}
		if a.set["passes"] {
			opt.Passes = a.o.passes
		}
		if a.set["eval-every"] {
			opt.EvalEvery = a.o.evalEvery
		}
		if a.o.algo.NoAverage {
			opt.NoAverage = true
		}
		return scenarios.Figure2(ctx, opt)
	},
}

func special(name string) figureFunc { return figures[name] }

// runFigure runs a figure preset and writes its data as one JSON document.
func runFigure(name string, a figureArgs, stdout, stderr io.Writer) int {
	o := a.o
	if o.format != "json" && o.format != "jsonl" {
		fmt.Fprintf(stderr, "dashboard solve: -format: the %s preset writes json, got %q\n", name, o.format)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	data, err := figures[name](ctx, a)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard solve: %s: %v\n", name, err)
		return 1
	}
	w := stdout
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			fmt.Fprintf(stderr, "dashboard solve: -out: %v\n", err)
			return 1
		}
		defer f.Close()
		w = f
	}
	e := json.NewEncoder(w)
	e.SetIndent("", " ")
	if err := e.Encode(sanitize(data)); err != nil {
		fmt.Fprintf(stderr, "dashboard solve: writing the output: %v\n", err)
		return 1
	}
	return 0
}

// sanitize replaces non-finite numbers (which JSON cannot hold) by null in
// the maps and slices the command builds itself; solver records and
// summaries do that on their own.
func sanitize(v any) any {
	switch t := v.(type) {
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil
		}
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = sanitize(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = sanitize(e)
		}
		return out
	}
	return v
}
