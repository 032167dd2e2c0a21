package scenarios

import (
	"errors"
	"fmt"
	"github.com/fwlab/fwlab/internal/recordfields"
	"strings"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Job is one trace of a run: an algorithm of the spec, one replication, the
// seed it runs with and its configured method.
type Job struct {
	Index int // the algorithm's position in the spec
	Algo  spec.Algo
	// Label names the trace wherever it is shown (TraceLabel): the
	// algorithm's name, and what a variant that departs from the paper
	// changes.
	Label       string
	Replication int
	Seed        int64
	Method      solver.Method
}

// Jobs configures every (algorithm, replication) of a resolved spec on the
// instance, replication r running with seed r.Seed + r. All methods are made
// up front, so that a bad parameter is reported before anything runs; the
// error is a *spec.FieldError naming "algorithms[i].<field>". A panic while
// configuring is reported as an error, not raised.
func Jobs(inst Instance, r *spec.Run) ([]Job, error) {
	lim := LimitsOf(r)
	var jobs []Job
	for i, a := range r.Algorithms {
		for rep := 0; rep < r.Replications; rep++ {
			seed := r.Seed + int64(rep)
			m, err := methodSafely(inst, a, lim, seed)
			if err != nil {
				return nil, algoFieldError(err, i)
			}
			jobs = append(jobs, Job{Index: i, Algo: a, Label: TraceLabel(inst, a), Replication: rep, Seed: seed, Method: recordfields.Produced(m)})
		}
	}
	return jobs, nil
}

// Labeler is implemented by instances whose algorithms may run a variant
// that departs from the paper (FWInstance: the slack collapse).
type Labeler interface {
	Label(a spec.Algo) string
}

// TraceLabel is the one place a trace's name is made: the instance's Label
// when it has one, else the algorithm's name.
func TraceLabel(inst Instance, a spec.Algo) string {
	if l, ok := inst.(Labeler); ok {
		return l.Label(a)
	}
	return a.Algo
}

func methodSafely(inst Instance, a spec.Algo, lim solver.Limits, seed int64) (m solver.Method, err error) {
	defer func() {
		if p := recover(); p != nil {
			m, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	m, err = inst.Method(a, lim, seed)
	if err == nil && m == nil {
		err = errors.New("no method was configured")
	}
	return m, err
}

// algoFieldError names the field of a method-construction error after the
// algorithm's position in the spec: an instance reports "m0", the spec's
// vocabulary is "algorithms[1].m0".
func algoFieldError(err error, i int) error {
	prefix := fmt.Sprintf("algorithms[%d].", i)
	var fe *spec.FieldError
	if errors.As(err, &fe) {
		f := fe.Field
		if !strings.HasPrefix(f, "algorithms[") {
			f = prefix + f
		}
		return &spec.FieldError{Field: f, Msg: fe.Msg}
	}
	return &spec.FieldError{Field: prefix + "algo", Msg: err.Error()}
}
