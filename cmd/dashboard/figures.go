package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
)

// figureFunc runs a paper-figure preset and returns its JSON-able data.
type figureFunc func(ctx context.Context, seed int64) (any, error)

// figures are the presets whose output is a figure's data rather than a
// list of traces; packages register them in init functions of this command.
var figures = map[string]figureFunc{}

func special(name string) figureFunc { return figures[name] }

// runFigure runs a figure preset and writes its data as one JSON document.
func runFigure(name string, o solveOpts, stdout, stderr io.Writer) int {
	if o.format != "json" && o.format != "jsonl" {
		fmt.Fprintf(stderr, "dashboard solve: -format: the %s preset writes json, got %q\n", name, o.format)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	data, err := figures[name](ctx, o.seed)
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
