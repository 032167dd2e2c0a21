package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
)

func checkList(t *testing.T, s store.Backend) {
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	type row struct {
		problem, algo, status, name, note string
	}
	rows := []row{
		{"lasso", "ssfw-as + slack collapse", store.StatusDone, "Lasso baseline", ""},
		{"lasso", "fista", store.StatusFailed, "", "diverges at L=1"},
		{"gflasso", "bc-ssfw-as", store.StatusDone, "100%_done", "paper figure"},
		{"ssvm-ocr", "bcfw", store.StatusRunning, "", `back\slash`},
		{"lasso", "ssfw-as", store.StatusCancelled, "second LASSO", "note with 50% off"},
	}
	ids := make([]string, len(rows))
	for i, rw := range rows {
		r := TestRun(rw.problem, rw.algo)
		if i == 2 {
			r = TestRun(rw.problem, "afw", rw.algo)
		}
		r.Status, r.Name, r.Note = rw.status, rw.name, rw.note
		r.Created = base.Add(time.Duration(i) * time.Minute)
		ids[i] = put(t, s, r)
	}
	for _, c := range []struct {
		f    store.Filter
		want []int // indices into rows, newest first
	}{
		{store.Filter{}, []int{4, 3, 2, 1, 0}},
		{store.Filter{Problem: "lasso"}, []int{4, 1, 0}},
		{store.Filter{Algorithm: "ssfw-as"}, []int{4, 0}},
		{store.Filter{Algorithm: "bc-ssfw-as"}, []int{2}}, // its second trace
		{store.Filter{Algorithm: "ssfw-as + slack collapse"}, []int{0}},
		{store.Filter{Algorithm: "ssfw"}, nil},
		{store.Filter{Algorithm: "ssfw-as +"}, nil},
		{store.Filter{Status: store.StatusDone}, []int{2, 0}},
		{store.Filter{Text: "lasso"}, []int{4, 1, 0}}, // 1 by its default name, "lasso: fista"
		{store.Filter{Text: "LaSsO bAs"}, []int{0}},
		{store.Filter{Text: "L=1"}, []int{1}},
		{store.Filter{Text: "%"}, []int{4, 2}},
		{store.Filter{Text: "_"}, []int{2}},
		{store.Filter{Text: `\`}, []int{3}},
		{store.Filter{Text: "Paper"}, []int{2}},
		{store.Filter{Problem: "lasso", Status: store.StatusDone}, []int{0}},
		{store.Filter{Problem: "lasso", Algorithm: "fista", Text: "diverges"}, []int{1}},
		{store.Filter{Limit: 2}, []int{4, 3}},
		{store.Filter{Limit: 2, Offset: 2}, []int{2, 1}},
		{store.Filter{Limit: 2, Offset: 4}, []int{0}},
		{store.Filter{Offset: 9}, nil},
		{store.Filter{Problem: "nope"}, nil},
		{store.Filter{OldestFirst: true, Limit: 3}, []int{0, 1, 2}},
		{store.Filter{Problem: "lasso", OldestFirst: true}, []int{0, 1, 4}},
	} {
		got, total, err := s.List(ctx, c.f)
		if err != nil {
			t.Fatalf("%+v: %v", c.f, err)
		}
		var gotIdx []int
		for _, r := range got {
			for i, id := range ids {
				if r.ID == id {
					gotIdx = append(gotIdx, i)
				}
			}
			if len(r.Traces) == 0 || r.Traces[0].Panels != nil || r.Instance.Panels != nil || r.Spec.Problem == "" {
				t.Errorf("listed run %s: traces %+v", r.ID, r.Traces)
			}
		}
		wantTotal := len(c.want)
		if c.f.Limit > 0 || c.f.Offset > 0 {
			wantTotal = len(rows)
		}
		if total != wantTotal || fmt.Sprint(gotIdx) != fmt.Sprint(c.want) {
			t.Errorf("%+v: runs %v (total %d), want %v (total %d)", c.f, gotIdx, total, c.want, wantTotal)
		}
	}
	// runs created in the same microsecond come in id order
	same := base.Add(time.Hour)
	var tied []string
	for i := 0; i < 4; i++ {
		r := TestRun("lasso", "afw")
		r.Created = same
		tied = append(tied, put(t, s, r))
	}
	got, _, _ := s.List(ctx, store.Filter{Limit: 4})
	for i := 1; i < len(got); i++ {
		if !got[i].Created.Equal(same) || got[i-1].ID < got[i].ID {
			t.Errorf("tied runs not in descending id order: %s then %s", got[i-1].ID, got[i].ID)
		}
	}
	for _, c := range []struct {
		f     store.Filter
		field string
	}{{store.Filter{Limit: store.MaxLimit + 1}, "limit"}, {store.Filter{Limit: -1}, "limit"}, {store.Filter{Offset: -1}, "offset"}} {
		if _, _, err := s.List(ctx, c.f); !fieldErr(err, c.field) {
			t.Errorf("%+v: %v", c.f, err)
		}
	}
}
