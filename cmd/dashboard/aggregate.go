package main

// aggregateOut is the per-iteration median, min and max of the replications
// of one algorithm.
type aggregateOut struct {
	Algo string         `json:"algo"`
	Rows []aggregateRow `json:"rows"`
}

type aggregateRow struct {
	K         int            `json:"k"`
	Passes    map[string]any `json:"passes"`
	Objective map[string]any `json:"objective"`
	Gap       map[string]any `json:"gap"`
}

func aggregateTraces(traces []traceOut) []aggregateOut { return nil }
