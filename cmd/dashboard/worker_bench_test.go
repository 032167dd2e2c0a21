package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// BenchmarkWorkerProcesses runs 200 short cells (LASSO, ssfw-as, 1000
// iterations on 500 samples: two 100-cell sweeps) on 1, 2 and 4
// `dashboard worker` processes of one slot each, in the same op, and
// reports each count's wall time and its speed-up against one worker
// (x-speedup-N). The machine's cores bound the speed-up.
func BenchmarkWorkerProcesses(b *testing.B) {
	c := pgtest.Start(b)
	seeds := make([]string, 50)
	for i := range seeds {
		seeds[i] = fmt.Sprint(i + 1)
	}
	dir := b.TempDir()
	var docs []string
	for s := 0; s < 2; s++ {
		doc := fmt.Sprintf(`{"base":{"problem":"lasso","params":{"n":"500"},"algorithms":[{"algo":"ssfw-as"}],"replications":1,"iters":1000,"seed":%d},
			"axes":[{"param":"seed","values":[%s]},{"param":"algorithms[0].rho","values":[0.1,0.2]}]}`, s*1000, strings.Join(seeds, ","))
		p := filepath.Join(dir, fmt.Sprintf("sweep%d.json", s))
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			b.Fatal(err)
		}
		docs = append(docs, p)
	}
	for i := 0; i < b.N; i++ {
		var one float64
		for _, n := range []int{1, 2, 4} {
			secs := runCells(b, c.NewDB(b), n, docs)
			if n == 1 {
				one = secs
			}
			b.ReportMetric(secs, fmt.Sprintf("s-workers=%d", n))
			if n > 1 {
				b.ReportMetric(one/secs, fmt.Sprintf("x-speedup-%d", n))
			}
		}
	}
}

// runCells starts n worker processes, queues the sweeps and returns the
// seconds from the first submit until every cell is stored.
func runCells(b *testing.B, db string, n int, docs []string) float64 {
	ctx := context.Background()
	st, err := pgstore.Open(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var ws []*workerProc
	for i := 0; i < n; i++ {
		ws = append(ws, startWorkerProc(b, db, fmt.Sprintf("b%d", i), "-slots", "1"))
	}
	start := time.Now()
	var ids []string
	for _, d := range docs {
		var out, errb bytes.Buffer
		if code := runSubmit([]string{"-db", db, "-sweep", d}, nil, &out, &errb); code != 0 {
			b.Fatalf("submit: %s", errb.String())
		}
		var id string
		fmt.Sscanf(out.String(), "sweep %s queued", &id)
		ids = append(ids, id)
	}
	for _, id := range ids {
		for {
			sw, err := st.GetSweep(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			if sw.Status == store.StatusDone {
				break
			}
			if !store.Live(sw.Status) {
				b.Fatalf("sweep %s", sw.Status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	secs := time.Since(start).Seconds()
	for _, w := range ws {
		w.cmd.Process.Kill()
		<-w.done
	}
	return secs
}
