package scenarios

import (
	"errors"
	"testing"

	"github.com/fwlab/fwlab/internal/spec"
)

func TestJobsConfigureEveryTraceOrNameTheField(t *testing.T) {
	r := spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: "ssfw-as"}, {Algo: "fista"}}, Replications: 3, Seed: 10}
	inst, rr := buildRun(t, r)
	r = *rr
	jobs, err := Jobs(inst, &r)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 6 {
		t.Fatalf("%d jobs, want 2 algorithms × 3 replications", len(jobs))
	}
	for i, j := range jobs {
		if j.Index != i/3 || j.Replication != i%3 || j.Seed != 10+int64(i%3) || j.Method == nil || j.Algo.Algo != r.Algorithms[i/3].Algo {
			t.Fatalf("job %d: %+v", i, j)
		}
	}
	// m0 larger than the sample count is the instance's rule; its field is
	// named after the algorithm's position.
	bad := spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: "fista"}, {Algo: "ssfw-as", Schedule: "constant", M0: 1000}}}
	if _, _, err := Resolve(&bad); err != nil {
		t.Fatal(err)
	}
	_, err = Jobs(inst, &bad)
	var fe *spec.FieldError
	if !errors.As(err, &fe) || fe.Field != "algorithms[1].m0" {
		t.Fatalf("error %v, want a field error on algorithms[1].m0", err)
	}
}

// Every file parameter declares its format, so that an upload can be
// checked by parsing it.
func TestPathParamsDeclareTheirFormat(t *testing.T) {
	for _, s := range All() {
		for _, p := range s.Params {
			if p.Kind != Path {
				continue
			}
			switch p.Format {
			case "csv", "svmlight", "ocr":
			default:
				t.Errorf("%s: path parameter %s has format %q, want csv, svmlight or ocr", s.Name, p.Name, p.Format)
			}
		}
	}
}
