package fw

import (
	"encoding/json"
	"math"
)

func finitePtr(p *float64) *float64 {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return nil
	}
	return p
}

func finiteOr0(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// MarshalJSON writes the record with non-finite values (which JSON cannot
// hold) as null, or left out for the Extra metrics (see AppendJSON).
func (r Record) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// MarshalJSON writes the summary with a non-finite objective or gap as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Objective *float64 `json:"objective"`
		Gap       *float64 `json:"gap"`
		Iters     int      `json:"iters"`
		Passes    float64  `json:"passes"`
		Time      float64  `json:"time_s"`
		Status    string   `json:"status"`
		Message   string   `json:"message"`
	}{finitePtr(&s.Objective), finitePtr(&s.Gap), s.Iters, finiteOr0(s.Passes), finiteOr0(s.Time), s.Status, s.Message})
}
