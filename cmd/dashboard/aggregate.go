package main

import (
	"github.com/fwlab/fwlab/internal/aggregate"
	"github.com/fwlab/fwlab/internal/solver"
)

// aggregateOut is the per-iteration median, min and max over the
// replications of one algorithm, and the same on a grid of effective passes.
type aggregateOut struct {
	Algo              string           `json:"algo"`
	Objective         []aggregate.Stat `json:"objective"`
	Gap               []aggregate.Stat `json:"gap"`
	ObjectiveByPasses []aggregate.Stat `json:"objective_by_passes"`
}

// aggregateTraces groups the traces by algorithm (in order of appearance)
// and aggregates each group.
func aggregateTraces(traces []traceOut) []aggregateOut {
	var order []string
	groups := map[string][][]solver.Record{}
	for _, t := range traces {
		if _, ok := groups[t.Algo]; !ok {
			order = append(order, t.Algo)
		}
		groups[t.Algo] = append(groups[t.Algo], t.Records)
	}
	var out []aggregateOut
	for _, a := range order {
		g := groups[a]
		out = append(out, aggregateOut{
			Algo:              a,
			Objective:         aggregate.ByIteration(g, aggregate.Objective, 0),
			Gap:               aggregate.ByIteration(g, aggregate.Gap, 0),
			ObjectiveByPasses: aggregate.OnGrid(g, aggregate.Passes, aggregate.LinearGrid(g, aggregate.Passes, 200), aggregate.Objective, 0),
		})
	}
	return out
}
