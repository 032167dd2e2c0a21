package bundle

import (
	"encoding/json"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/fwlab/fwlab/internal/solver"
)

// The decoder read records with encoding/json (into a map of raw values)
// before it had its scanner: jsonRecord is that reading, kept as the
// reference the scanner is compared with.

func jsonRecord(path string, raw map[string]json.RawMessage) (solver.Record, error) {
	var r solver.Record
	for _, req := range recordFields[:requiredFields] {
		if _, ok := raw[req]; !ok {
			return r, errorf(join(path, req), "is required")
		}
	}
	if len(raw) > len(recordFields) || !allKnown(raw, recordFields[:]) {
		keys := make([]string, 0, len(raw))
		for k := range raw {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !slices.Contains(recordFields[:], k) {
				return r, errorf(join(path, k), "unknown field")
			}
		}
	}
	for _, k := range recordFields[:] {
		v, ok := raw[k]
		if !ok {
			continue
		}
		fp := join(path, k)
		var err error
		nonNeg := func(dst *int) {
			var n int64
			if n, err = parseInt(fp, v); err == nil {
				if n < 0 {
					err = errorf(fp, "must be non-negative, got %d", n)
				}
				*dst = int(n)
			}
		}
		opt := func(dst **float64) {
			if string(v) == "null" {
				return
			}
			var f float64
			if f, err = parseFloat(fp, v); err == nil {
				*dst = &f
			}
		}
		switch k {
		case "k":
			nonNeg(&r.K)
		case "passes":
			r.Passes, err = parseFloat(fp, v)
		case "time_s":
			r.Time, err = parseFloat(fp, v)
		case "gamma":
			r.Gamma, err = parseFloat(fp, v)
		case "step":
			if err = json.Unmarshal(v, &r.Step); err != nil {
				err = errorf(fp, "must be a string, got %s", rawShort(v))
			} else if r.Step == "" || utf8.RuneCountInString(r.Step) > 64 {
				err = errorf(fp, "must be a step kind (fw, away, drop, …) of 1 to 64 characters")
			}
		case "batch":
			nonNeg(&r.Batch)
		case "active":
			nonNeg(&r.Active)
		case "fw_steps":
			nonNeg(&r.FWSteps)
		case "away_steps":
			nonNeg(&r.AwaySteps)
		case "drops":
			nonNeg(&r.Drops)
		case "cleanups":
			nonNeg(&r.Cleanups)
		case "objective":
			opt(&r.Objective)
		case "gap":
			opt(&r.Gap)
		case "grad_err":
			opt(&r.GradErr)
		case "extra":
			r.Extra, err = jsonExtra(fp, v)
		}
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

func allKnown(raw map[string]json.RawMessage, known []string) bool {
	for k := range raw {
		if !slices.Contains(known, k) {
			return false
		}
	}
	return true
}

func jsonExtra(path string, v json.RawMessage) (map[string]float64, error) {
	if string(v) == "null" {
		return nil, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		return nil, errorf(path, "must be an object of numbers")
	}
	if len(raw) == 0 {
		return nil, nil
	}
	out := make(map[string]float64, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		x := raw[k]
		if k == "" || utf8.RuneCountInString(k) > 256 {
			return nil, errorf(path, "keys must be 1 to 256 characters")
		}
		f, err := parseFloat(path+"."+k, x)
		if err != nil {
			return nil, err
		}
		out[k] = f
	}
	return out, nil
}
