package queue

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// metrics are a worker's counters, served in the Prometheus text format.
type metrics struct {
	running, finished, failures, released, rescued, records atomic.Int64

	mu      sync.Mutex
	samples []sample // records written, the last rateWindow of them
}

type sample struct {
	t time.Time
	n int64
}

const rateWindow = 10 * time.Second

func newMetrics() *metrics { return &metrics{} }

func (m *metrics) addRecords(n int) {
	total := m.records.Add(int64(n))
	m.mu.Lock()
	now := time.Now()
	m.samples = append(m.samples, sample{now, total})
	for len(m.samples) > 1 && now.Sub(m.samples[0].t) > rateWindow {
		m.samples = m.samples[1:]
	}
	m.mu.Unlock()
}

// rate is the records written per second over the last rateWindow.
func (m *metrics) rate() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for len(m.samples) > 0 && now.Sub(m.samples[0].t) > rateWindow {
		m.samples = m.samples[1:]
	}
	if len(m.samples) == 0 {
		return 0
	}
	first := m.samples[0].n
	// the first sample's records were written at its time, before the window's span
	return float64(m.records.Load()-first) / rateWindow.Seconds()
}

// Handler serves /healthz (200 while the worker's database answers) and
// /metrics (Prometheus text format).
func (w *Worker) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(rw http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := w.cfg.Store.Pool().Ping(ctx); err != nil {
			http.Error(rw, "database: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(rw, "ok")
	})
	mux.HandleFunc("GET /metrics", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m := w.m
		for _, g := range []struct {
			name, typ, help string
			v               float64
		}{
			{"fwlab_worker_slots", "gauge", "Jobs the worker runs at once.", float64(w.cfg.Slots)},
			{"fwlab_worker_jobs_running", "gauge", "Jobs running now.", float64(m.running.Load())},
			{"fwlab_worker_jobs_finished_total", "counter", "Runs finished and stored (done, failed or cancelled).", float64(m.finished.Load())},
			{"fwlab_worker_jobs_failures_total", "counter", "Jobs that ended in an error (tried again by the queue).", float64(m.failures.Load())},
			{"fwlab_worker_jobs_released_total", "counter", "Runs given back to the queue as the worker stopped.", float64(m.released.Load())},
			{"fwlab_worker_jobs_rescued_total", "counter", "Runs of other workers whose heartbeat stopped, given back to the queue by this worker.", float64(m.rescued.Load())},
			{"fwlab_worker_records_total", "counter", "Records stored.", float64(m.records.Load())},
			{"fwlab_worker_records_per_second", "gauge", "Records stored per second over the last 10 s.", m.rate()},
		} {
			fmt.Fprintf(rw, "# HELP %s %s\n# TYPE %s %s\n%s %g\n", g.name, g.help, g.name, g.typ, g.name, g.v)
		}
	})
	return mux
}
