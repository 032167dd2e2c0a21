package live

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fwlab/fwlab/fw"
)

// refItem and refEncode are the client's hand-written queue and encoder
// before they were generated from the record's declaration: the reference
// the generated ones must match byte for byte.
type refItem struct {
	k, batch, active, fwSteps, awaySteps, drops, cleanups int
	passes, time, gamma, objective, gap, gradErr          float64
	step                                                  string
	has                                                   uint8
	extras                                                []metric
}

func refFill(rec fw.Record) refItem {
	it := refItem{k: rec.K, batch: rec.Batch, active: rec.Active, fwSteps: rec.FWSteps, awaySteps: rec.AwaySteps,
		drops: rec.Drops, cleanups: rec.Cleanups, passes: rec.Passes, time: rec.Time, gamma: rec.Gamma, step: rec.Step}
	if p := rec.Objective; p != nil {
		it.objective, it.has = *p, it.has|1
	}
	if p := rec.Gap; p != nil {
		it.gap, it.has = *p, it.has|2
	}
	if p := rec.GradErr; p != nil {
		it.gradErr, it.has = *p, it.has|4
	}
	for k, v := range rec.Extra {
		it.extras = append(it.extras, metric{k, v})
	}
	slices.SortFunc(it.extras, func(a, b metric) int { return strings.Compare(a.key, b.key) })
	return it
}

func refCount(b []byte, key string, v int) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), int64(v), 10)
}

func refEncode(b []byte, trace []byte, items []refItem, from int) ([]byte, int) {
	b = append(b, `{"records":[`...)
	for i := from; i < len(items); i++ {
		it := &items[i]
		if i > from {
			if len(b) > MaxBatchBytes-4<<10 {
				return append(b, "]}"...), i - from
			}
			b = append(b, ',')
		}
		b = append(b, `{"trace":`...)
		b = append(b, trace...)
		b = strconv.AppendInt(append(b, `,"k":`...), int64(it.k), 10)
		b = appendNum(append(b, `,"passes":`...), it.passes)
		b = appendNum(append(b, `,"time_s":`...), it.time)
		step := it.step
		if step == "" {
			step = "none"
		}
		b = appendStr(append(b, `,"step":`...), step)
		b = appendNum(append(b, `,"gamma":`...), it.gamma)
		b = strconv.AppendInt(append(b, `,"batch":`...), int64(it.batch), 10)
		b = strconv.AppendInt(append(b, `,"active":`...), int64(it.active), 10)
		b = refCount(b, `,"fw_steps":`, it.fwSteps)
		b = refCount(b, `,"away_steps":`, it.awaySteps)
		b = refCount(b, `,"drops":`, it.drops)
		b = refCount(b, `,"cleanups":`, it.cleanups)
		if it.has&1 != 0 {
			b = appendNum(append(b, `,"objective":`...), it.objective)
		}
		if it.has&2 != 0 {
			b = appendNum(append(b, `,"gap":`...), it.gap)
		}
		if it.has&4 != 0 {
			b = appendNum(append(b, `,"grad_err":`...), it.gradErr)
		}
		if len(it.extras) > 0 {
			b = append(b, `,"extra":{`...)
			for j, m := range it.extras {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendNum(append(appendStr(b, m.key), ':'), m.v)
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, "]}"...), len(items) - from
}

// randFloat is a value of every sort the encoder treats apart: zero,
// negative zero, non-finite, tiny, huge, integral, ordinary.
func randFloat(rng *rand.Rand) float64 {
	switch rng.IntN(10) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	case 2:
		return []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(3)]
	case 3:
		return math.SmallestNonzeroFloat64 * float64(rng.IntN(1000)+1)
	case 4:
		return math.MaxFloat64 / float64(rng.IntN(1000)+1)
	case 5:
		return float64(rng.IntN(2000) - 1000)
	}
	return (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(40)-20))
}

func randCount(rng *rand.Rand) int {
	switch rng.IntN(4) {
	case 0, 1:
		return 0
	case 2:
		return rng.IntN(10) - 3
	}
	return int(rng.Int64()) >> rng.IntN(64)
}

func randOpt(rng *rand.Rand) *float64 {
	if rng.IntN(3) == 0 {
		return nil
	}
	return fw.F(randFloat(rng))
}

var randKeys = []string{"residual", "dual", "train_err", `qu"ote`, "back\\slash", "<tag>&", "é", "tab\t", "x"}

func randRecord(rng *rand.Rand) fw.Record {
	r := fw.Record{K: randCount(rng), Passes: randFloat(rng), Time: randFloat(rng), Gamma: randFloat(rng),
		Batch: randCount(rng), Active: randCount(rng), FWSteps: randCount(rng), AwaySteps: randCount(rng),
		Drops: randCount(rng), Cleanups: randCount(rng), Objective: randOpt(rng), Gap: randOpt(rng), GradErr: randOpt(rng)}
	r.Step = []string{"", "fw", "away", "drop", "pairwise", "block", "custom \"step\"", "ünï"}[rng.IntN(8)]
	switch rng.IntN(4) {
	case 0:
	case 1:
		r.Extra = map[string]float64{}
	default:
		r.Extra = map[string]float64{}
		for range rng.IntN(len(randKeys)) + 1 {
			r.Extra[randKeys[rng.IntN(len(randKeys))]] = randFloat(rng)
		}
	}
	return r
}

// The queue and encoder generated from the declaration send, for many
// random records (non-finite values, zero and negative counts, missing
// optional values, empty, absent and many metrics, steps to escape), the
// bytes the hand-written client sent, batch for batch.
func TestGeneratedEncoderSendsWhatItSent(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 1))
	r := &Run{ID: "t", names: map[string]int{"a": 0, "b \"c\"": 1}, traceJSON: [][]byte{[]byte(`"a"`), []byte(`"b \"c\""`)}, flushAt: DefaultMaxPending + 1}
	r.space = sync.NewCond(&r.mu)
	const n = 8000 // fewer than DefaultMaxPending: Record never waits
	var refs [2][]refItem
	for range n {
		rec := randRecord(rng)
		tr := rng.IntN(2)
		if err := r.Record([]string{"a", "b \"c\""}[tr], rec); err != nil {
			t.Fatal(err)
		}
		refs[tr] = append(refs[tr], refFill(rec))
	}
	// the metrics of each record in the order of the reference (a map's
	// order is Go's choice, made anew on each range)
	q := &r.queue
	for i := range q.items {
		slices.SortFunc(q.extras[q.items[i].extraLo:q.items[i].extraHi], func(a, b metric) int { return strings.Compare(a.key, b.key) })
	}
	// one trace per queue, as the reference encodes
	for tr := range 2 {
		var one queue
		for _, it := range q.items {
			if int(it.trace) == tr {
				lo := int32(len(one.extras))
				one.extras = append(one.extras, q.extras[it.extraLo:it.extraHi]...)
				it.extraLo, it.extraHi = lo, int32(len(one.extras))
				one.items = append(one.items, it)
			}
		}
		if len(one.items) != len(refs[tr]) {
			t.Fatalf("trace %d: %d records queued, %d recorded", tr, len(one.items), len(refs[tr]))
		}
		batches := 0
		for from := 0; from < len(one.items); batches++ {
			got, n := r.encode(nil, &one, from)
			want, wn := refEncode(nil, r.traceJSON[tr], refs[tr], from)
			if n != wn || string(got) != string(want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						lo := max(0, i-200)
						t.Fatalf("trace %d, batch from %d: %d records, want %d; first difference at byte %d:\n got  %s\n want %s", tr, from, n, wn, i, got[lo:min(len(got), i+100)], want[lo:min(len(want), i+100)])
					}
				}
				t.Fatalf("trace %d, batch from %d: %d records (%d bytes), want %d (%d bytes)", tr, from, n, len(got), wn, len(want))
			}
			from += n
		}
		if batches < 2 {
			t.Errorf("trace %d: %d batch: the records should fill more than one", tr, batches)
		}
	}
}
