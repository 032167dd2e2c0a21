package bundle_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// A bundle written, read back, stored and exported again.
func Example() {
	b := &bundle.Bundle{
		Version: "v1.0.0",
		Status:  store.StatusDone,
		Spec:    spec.Run{Problem: "simplex", Algorithms: []spec.Algo{{Algo: "afw"}}, Replications: 1, Iters: 10},
		Info:    bundle.Info{Dim: 3, Samples: 1, Blocks: 1},
		Traces: []bundle.Trace{{Algo: "afw", Seed: 1,
			Summary: &solver.Summary{Objective: 0.5, Gap: 0, Iters: 1, Status: solver.StatusConverged},
			Records: []solver.Record{
				{K: 0, Step: solver.StepNone, Active: 1, Objective: solver.F(1), Gap: solver.F(2)},
				{K: 1, Passes: 1, Step: solver.StepFW, Gamma: math.Inf(1), Active: 2, FWSteps: 1},
			}}},
	}
	var buf bytes.Buffer
	if err := bundle.Encode(&buf, b); err != nil {
		panic(err)
	}
	fmt.Print(strings.SplitAfter(buf.String(), "\n")[2])

	got, err := bundle.Decode(&buf)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	st, err := store.Open(store.Memory)
	if err != nil {
		panic(err)
	}
	defer st.Close()
	id, err := bundle.Put(ctx, st, got)
	if err != nil {
		panic(err)
	}
	out, err := bundle.FromStore(ctx, st, id)
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Status, out.Traces[0].Status, len(out.Traces[0].Records), out.Traces[0].Records[1].Gamma)

	_, err = bundle.Decode(strings.NewReader(`{"format":"fwlab-bundle","format_version":1,"version":"x","spec":{"problem":"simplex","algorithms":[{"algo":"afw"}]},"info":{"dim":3,"samples":1,"blocks":1},"traces":[{"algo":"afw","replication":0,"seed":1,"records":[{"k":0,"passes":0,"time_s":0,"step":"none","gamma":0,"batch":0,"active":1},{"k":0`))
	fmt.Println(err)
	// Output:
	// {"k":0,"passes":0,"time_s":0,"step":"none","gamma":0,"batch":0,"active":1,"objective":1,"gap":2},
	// done converged 2 +Inf
	// bundle: traces[0].records[1]: the document ends early (truncated?) (line 1)
}
