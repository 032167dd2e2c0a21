package bundle

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// traceMeta is what the decoder keeps of a trace whose records have gone
// to the sink.
type traceMeta struct {
	algo        string
	replication int
	n           int  // records
	lastK       int  // the last record's k
	checkedK    bool // every k was checked against the spec's iters
	extras      map[string]struct{}
}

// traceStatuses are the statuses a trace may have: the solver's and the
// run's.
var traceStatuses = append([]string{solver.StatusConverged, solver.StatusStalled, solver.StatusMaxIters, solver.StatusMaxPasses,
	solver.StatusCancelled, solver.StatusFailed}, store.Statuses...)

func checkTraceStatus(path, s string) error {
	if !slices.Contains(traceStatuses, s) {
		return errorf(path, "must be one of %s, got %s", strings.Join(traceStatuses, ", "), quoteShort(s))
	}
	return nil
}

func (d *decoder) traces() error {
	if err := d.delim("traces", '['); err != nil {
		return err
	}
	if d.specRaw != nil && d.formatSeen {
		// check the spec now, so that records are checked as they come
		if err := d.parseSpec(); err != nil {
			return err
		}
	}
	for i := 0; ; i++ {
		path := fmt.Sprintf("traces[%d]", i)
		t, err := d.token(path)
		if err != nil {
			return err
		}
		if t == json.Delim(']') {
			return nil
		}
		if t != json.Delim('{') {
			return errorf(path, "must be an object, got %s", describe(t))
		}
		if max := spec.MaxAlgorithms * spec.MaxReplications; i >= max {
			return errorf(path, "a run has at most %d traces", max)
		}
		if err := d.sink.beginTrace(i); err != nil {
			return err
		}
		d.metas = append(d.metas, traceMeta{})
		tr, err := d.trace(path, i)
		if err != nil {
			return err
		}
		m := &d.metas[i]
		m.algo, m.replication = tr.Algo, tr.Replication
		if err := d.sink.endTrace(i, &tr); err != nil {
			return err
		}
	}
}

func (d *decoder) trace(path string, i int) (Trace, error) {
	var t Trace
	seen := map[string]bool{}
	for {
		k, ok, err := d.key(path)
		if err != nil {
			return t, err
		}
		if !ok {
			break
		}
		fp := join(path, k)
		if seen[k] {
			return t, errorf(fp, "appears twice")
		}
		seen[k] = true
		switch k {
		case "algo", "status", "panels_error":
			s, err := d.string(fp)
			if err != nil {
				return t, err
			}
			switch k {
			case "algo":
				t.Algo = s
			case "status":
				if err := checkTraceStatus(fp, s); err != nil {
					return t, err
				}
				t.Status = s
			case "panels_error":
				t.PanelsError = s
			}
		case "replication", "seed":
			v, err := d.int(fp)
			if err != nil {
				return t, err
			}
			if k == "seed" {
				t.Seed = v
			} else {
				t.Replication = int(v)
			}
		case "summary":
			m, err := d.raw(fp)
			if err != nil {
				return t, err
			}
			if string(m) != "null" {
				if t.Summary, err = summary(fp, m); err != nil {
					return t, err
				}
				if err := checkTraceStatus(fp+".status", t.Summary.Status); err != nil {
					return t, err
				}
			}
		case "panels":
			m, err := d.rawMax(fp, MaxPanelBytes)
			if err != nil {
				return t, err
			}
			if string(m) != "null" {
				if err := checkPanel(fp, m); err != nil {
					return t, err
				}
				t.Panels = m
			}
		case "records":
			if err := d.records(fp, i); err != nil {
				return t, err
			}
		default:
			return t, errorf(fp, "unknown field")
		}
	}
	for _, req := range []string{"algo", "replication", "seed", "records"} {
		if !seen[req] {
			return t, errorf(join(path, req), "is required")
		}
	}
	return t, nil
}

// records reads a trace's records with the scanner (see scan.go) and the
// converter (see convert.go), which checks each (k increasing, at most the
// spec's iters when the spec came first, at most MaxExtraMetrics extra
// keys in the trace) and hands them to the sink a chunk at a time.
func (d *decoder) records(path string, i int) error {
	if err := d.delim(path, '['); err != nil {
		return err
	}
	m := &d.metas[i]
	m.checkedK = d.sp != nil
	s := d.takeOver()
	s.quickForms = d.keepForms
	c := d.startConverter(path, i)
	defer c.stop()
	b, err := c.batch()
	if err != nil {
		return err
	}
	for j := 0; ; j++ {
		rp := func() string { return fmt.Sprintf("%s[%d]", path, j) }
		ch, ok := s.skipSpace()
		if !ok {
			return c.fail(b, s.ended(rp()))
		}
		if ch == ']' && j == 0 {
			break
		}
		if j > 0 {
			if ch == ']' {
				break
			}
			if ch != ',' {
				return c.fail(b, s.errorAt(rp(), s.fail(s.pos, "", s.syntax(s.pos, "after array element"))))
			}
			s.pos++
			if _, ok := s.skipSpace(); !ok {
				return c.fail(b, s.ended(rp()))
			}
		}
		if err := s.shapeInto(b); err != nil {
			return c.fail(b, s.errorAt(rp(), err))
		}
		if len(b.shaped) == chunkRecords {
			if err := c.send(b); err != nil {
				return err
			}
			if b, err = c.batch(); err != nil {
				return err
			}
		}
	}
	if err := c.finish(b); err != nil {
		return err
	}
	if err := d.resume(); err != nil {
		return d.ioError(path, err)
	}
	// the closing bracket
	_, err = d.token(fmt.Sprintf("%s[%d]", path, m.n))
	return err
}

// checkRecord checks record j of a trace's records (at path) against
// those before it and the spec.
func (d *decoder) checkRecord(path string, j int, m *traceMeta, r *solver.Record) error {
	rp := func() string { return fmt.Sprintf("%s[%d]", path, j) }
	if m.n > 0 && r.K <= m.lastK {
		return errorf(rp()+".k", "must be greater than the previous record's k (%d), got %d", m.lastK, r.K)
	}
	if d.sp != nil && r.K > d.sp.Iters {
		return errorf(rp()+".k", "must be at most the spec's iters (%d), got %d", d.sp.Iters, r.K)
	}
	for k := range r.Extra {
		if _, ok := m.extras[k]; ok {
			continue
		}
		if len(m.extras) >= MaxExtraMetrics {
			return errorf(rp()+".extra."+k, "a trace may have at most %d extra metrics (each is a chart); this is one more", MaxExtraMetrics)
		}
		if m.extras == nil {
			m.extras = map[string]struct{}{}
		}
		m.extras[k] = struct{}{}
	}
	m.lastK = r.K
	m.n++
	return nil
}
