package pgstore

import (
	"context"
	"testing"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// A queued run is named by default from its algorithms' names; once its
// worker names the traces (a variant with what it changes), the default
// name follows them in the same transaction, while a name the user gave
// stays as it is.
func TestSetLabelsRenamesTheDefaultNameOnly(t *testing.T) {
	ctx := context.Background()
	s := openShared(t)
	for _, c := range []struct{ given, want string }{
		{"", "gflasso: bc-ssfw-as + slack collapse, spg"},
		{"my study", "my study"},
	} {
		r := storetest.TestRun("gflasso", "bc-ssfw-as", "spg")
		r.Status, r.Name = store.StatusQueued, c.given
		id, err := s.PutRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Get(ctx, id); c.given == "" && got.Name != "gflasso: bc-ssfw-as, spg" {
			t.Errorf("a queued run is named %q before its worker names its traces", got.Name)
		}
		if err := s.Claim(ctx, id, "w1/7/1"); err != nil {
			t.Fatal(err)
		}
		if err := s.SetLabels(ctx, id, "w1/7/1", []string{"bc-ssfw-as + slack collapse", ""}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != c.want || got.Traces[0].Algo != "bc-ssfw-as + slack collapse" || got.Traces[1].Algo != "spg" {
			t.Errorf("put named %q, after the worker named the traces: %q with traces %q, %q; want %q",
				c.given, got.Name, got.Traces[0].Algo, got.Traces[1].Algo, c.want)
		}
	}
}
