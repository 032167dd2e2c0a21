package server

import (
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// BenchmarkStreamOverhead measures the records per second of one run of the
// fake scenario (a method that does nothing but emit records, so that any
// cost of streaming shows) alone, with a websocket client that never reads,
// and with one that reads everything, and reports the ratios to the run
// alone (1 means no slowdown). The rate is taken from the solver's own
// clock (the summary's time).
func BenchmarkStreamOverhead(b *testing.B) {
	srv, ts := newTestServer(b, Options{WriteTimeout: time.Minute})
	const n = 300_000
	measure := func(client string) float64 {
		id := create(b, ts, fakeRun(n, "fw"))
		var c *websocket.Conn
		if client != "" {
			c = dial(b, ts, id)
			if client == "reading" {
				go func() {
					for {
						if _, _, err := c.ReadMessage(); err != nil {
							return
						}
					}
				}()
			}
		}
		run := waitFinished(b, srv, id)
		secs := run.Status().Traces[0].Summary.Time
		if c != nil {
			c.Close()
		}
		waitFor(b, "streams to end", func() bool { return srv.openStreams() == 0 })
		if got := run.Traces()[0].Len(); got != n+1 {
			b.Fatalf("%d records stored, want %d", got, n+1)
		}
		return secs
	}
	var alone, never, reading float64
	for i := 0; i < b.N; i++ {
		alone += measure("")
		never += measure("never")
		reading += measure("reading")
	}
	recs := float64(n * b.N)
	b.ReportMetric(recs/alone, "rec/s-alone")
	b.ReportMetric(recs/never, "rec/s-never-reading")
	b.ReportMetric(recs/reading, "rec/s-reading")
	b.ReportMetric(alone/never, "ratio-never-reading")
	b.ReportMetric(alone/reading, "ratio-reading")
}
