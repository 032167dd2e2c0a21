package storetest

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// checkDefaultNames: a run put without a name is named by its problem and
// its algorithms in the same write (each once, as its first replication's
// traces name them, a variant with what it changes), so that every reader
// sees the name from the start; a name given is kept; the default is an
// ordinary name the user may change or clear; a run without traces is
// named by its spec's algorithms; a default too long is cut to MaxName.
func checkDefaultNames(t *testing.T, s store.Backend) {
	ctx := context.Background()
	name := func(id string) string {
		t.Helper()
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return got.Name
	}

	r := TestRun("gflasso", "bc-ssfw-as", "bcfw", "bc-ssfw-as")
	r.Spec.Replications = 2
	r.Traces = nil
	for i, a := range []string{"bc-ssfw-as + slack collapse", "bcfw", "bc-ssfw-as + slack collapse"} {
		for rep := 0; rep < 2; rep++ {
			r.Traces = append(r.Traces, store.Trace{Index: len(r.Traces), Algo: a, Replication: rep, Seed: int64(10*i + rep)})
		}
	}
	id := put(t, s, r)
	want := "gflasso: bc-ssfw-as + slack collapse, bcfw"
	if got := name(id); got != want || r.Name != want {
		t.Errorf("a run put without a name is named %q (the run given back: %q), want %q", got, r.Name, want)
	}
	// listed by that name, found by searching it
	runs, _, err := s.List(ctx, store.Filter{Text: "slack collapse, bcfw"})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != id || runs[0].Name != want {
		t.Errorf("searching the default name lists %v", runs)
	}

	given := TestRun("lasso", "afw")
	given.Name = "my lasso"
	givenID := put(t, s, given)
	if name(givenID) != "my lasso" {
		t.Errorf("a name given is stored as %q", name(givenID))
	}
	// what a bundle carries: a chosen name, never the default (given back on import)
	for _, c := range []struct{ id, want string }{{id, ""}, {givenID, "my lasso"}} {
		got, err := s.Get(ctx, c.id)
		if err != nil {
			t.Fatal(err)
		}
		if g := store.GivenName(got); g != c.want {
			t.Errorf("the run named %q has the given name %q, want %q", got.Name, g, c.want)
		}
	}

	bare := TestRun("lasso", "afw", "fista")
	bare.Traces = nil
	if id := put(t, s, bare); name(id) != "lasso: afw, fista" {
		t.Errorf("a run without traces is named %q, want its spec's algorithms", name(id))
	}

	long := TestRun("lasso")
	for i := 0; i < 40; i++ {
		a := strings.Repeat("x", 9) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		long.Spec.Algorithms = append(long.Spec.Algorithms, spec.Algo{Algo: a})
		long.Traces = append(long.Traces, store.Trace{Index: i, Algo: a})
	}
	if got := name(put(t, s, long)); utf8.RuneCountInString(got) != store.MaxName || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "lasso: xxxxxxxxxaa, ") {
		t.Errorf("a long default name is %q (%d characters), want it cut to %d ending in …", got, utf8.RuneCountInString(got), store.MaxName)
	}

	// the default is the user's to change, or to clear
	for _, n := range []string{"renamed", ""} {
		if err := s.Update(ctx, id, store.Edit{Name: &n}); err != nil {
			t.Fatal(err)
		}
		if got := name(id); got != n {
			t.Errorf("renamed to %q, reads %q", n, got)
		}
	}
}

// checkImportNames: a run streamed in without a name is named by its
// problem and its imported traces' names at Commit; one with a name keeps it.
func checkImportNames(t *testing.T, s store.Backend) {
	ctx := context.Background()
	imp, ok := s.(store.Importer)
	if !ok {
		t.Fatalf("%T does not take runs as streams (store.Importer)", s)
	}
	for i, c := range []struct{ name, want string }{
		{"", "gflasso: bc-ssfw-as + slack collapse, spg"},
		{"the bundle's own", "the bundle's own"},
	} {
		im, err := imp.StreamImport(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for j, a := range []string{"bc-ssfw-as + slack collapse", "bc-ssfw-as + slack collapse", "spg"} {
			// named only at the end of each trace, as a bundle names them
			if err := im.AddTrace(ctx, store.Trace{Index: j}); err != nil {
				t.Fatal(err)
			}
			if err := im.EndTrace(ctx, store.Trace{Index: j, Algo: a, Replication: []int{0, 1, 0}[j], Seed: 3}, store.TraceResult{Status: store.StatusDone}); err != nil {
				t.Fatal(err)
			}
		}
		r := TestRun("gflasso", "bc-ssfw-as", "spg")
		r.Traces = nil
		r.Status, r.Name = store.StatusDone, c.name
		id, existing, err := im.Commit(ctx, r, "sha256:names"+string(rune('0'+i)))
		if err != nil || existing {
			t.Fatalf("commit: %v (existing %v)", err, existing)
		}
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != c.want {
			t.Errorf("an import named %q is stored as %q, want %q", c.name, got.Name, c.want)
		}
	}
}
