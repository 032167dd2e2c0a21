package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

// handleWS streams a run over a websocket (api.md): hello, records batches,
// status changes, done. The handler's goroutine is the connection's only
// writer; a second goroutine reads (answering pings and close frames, and
// noticing a client that went away). The solver is never blocked: records
// are read from the run's store, and a client that cannot keep up is
// disconnected with close code 1013. The status JSON of the hello, status
// and done messages leaves the traces' panels out (has_panels says which
// have them; GET /api/runs/{id} gives them). A records message is
// {"type":"records","batches":[{"trace","from","stored","records":[…]}]}:
// the records from index from on, and stored, the count the server holds
// for that trace (more than from + len(records) while the client catches
// up). A message holds at most about MaxMessage bytes.
func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	run, ok := s.run(w, r)
	if !ok {
		return
	}
	client := clientAddr(r)
	if !s.reserveStream(client) {
		writeError(w, http.StatusTooManyRequests, "", fmt.Sprintf("a client may hold at most %d streams open%s; close one", s.opts.MaxStreamsPerClient, s.opts.flag("MaxStreamsPerClient")))
		return
	}
	defer s.releaseStream(client)
	conn, err := upgrade(w, r)
	if err != nil {
		return // the upgrader has answered
	}
	if !s.track(conn) {
		_ = conn.CloseWith(closeGoingAway, "server shutting down", time.Now().Add(time.Second))
		_ = conn.Close()
		return
	}
	defer s.untrack(conn)
	st := &stream{s: s, run: run, conn: conn}
	st.serve()
}

type stream struct {
	s    *Server
	run  *session.Run
	conn *wsConn
	buf  []byte
}

func (st *stream) serve() {
	o := &st.s.opts
	sub := st.run.Subscribe()
	defer sub.Close()

	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		_ = st.conn.ReadLoop(o.PongWait)
		_ = st.conn.Close() // unblock a writer stuck on a dead peer
	}()
	defer func() {
		_ = st.conn.Close()
		<-readerDone
	}()

	version := st.run.Version()
	if !st.sendStatus("hello") {
		return
	}
	traces := st.run.Traces()
	cursors := make([]int, len(traces))
	ping := time.NewTicker(o.PingInterval)
	defer ping.Stop()
	// a run live on a worker elsewhere: read it again from the store
	var reread <-chan time.Time
	var woken <-chan struct{}
	follow := st.s.following(st.run)
	if follow {
		t := time.NewTicker(FollowInterval)
		defer t.Stop()
		reread = t.C
		var stop func()
		woken, stop = st.s.wakeups(st.run.ID)
		defer stop()
	}
	runStatus := st.run.RunStatus()
	instance := instanceKey(st.run.Info())
	var last time.Time
	more := true // send what is stored at once
	for {
		select {
		case <-st.s.closing: // also while a backlog keeps the loop busy
			st.goAway()
			return
		default:
		}
		if !more {
			select {
			case <-sub.C:
			case <-reread:
				st.run = st.s.reread(st.run)
				traces = st.run.Traces()
			case <-woken:
				st.run = st.s.reread(st.run)
				traces = st.run.Traces()
			case <-ping.C:
				if st.conn.Ping(time.Now().Add(o.WriteTimeout)) != nil {
					return
				}
				continue
			case <-readerDone:
				return
			case <-st.s.closing:
				st.goAway()
				return
			}
		}
		// Coalesce: at most one records message per MinInterval.
		if wait := o.MinInterval - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-readerDone:
				t.Stop()
				return
			case <-st.s.closing:
				t.Stop()
				st.goAway()
				return
			}
		}
		// Keep pinging while busy too: the reader's deadline depends on pongs.
		select {
		case <-ping.C:
			if st.conn.Ping(time.Now().Add(o.WriteTimeout)) != nil {
				return
			}
		default:
		}
		newVersion := st.run.Version()
		finished := st.run.Finished() // read before the records: a finished trace has stored them all
		if follow {
			// a run read from the store: its status is the stored one, and
			// it is finished once that is
			newVersion = version
			if s := st.run.RunStatus(); s != runStatus {
				runStatus = s
				newVersion = version + 1
			}
			// a worker builds the instance after it took the run: its
			// description and panels reach the page with a status
			if k := instanceKey(st.run.Info()); k != instance {
				instance = k
				newVersion = version + 1
			}
			finished = !store.Live(runStatus)
		}
		msg, pending, rerr := st.records(traces, cursors)
		if rerr != nil {
			// The stored records cannot all be read: say so and end the
			// stream rather than send a done over missing records.
			st.s.log.Error("streaming a run's records", "run", st.run.ID, "err", rerr)
			_ = st.conn.CloseWith(closeInternalError, clipClose("reading the run's records failed: "+rerr.Error()), time.Now().Add(time.Second))
			return
		}
		if msg != nil {
			start := time.Now()
			if st.conn.WriteText(msg, start.Add(o.WriteTimeout)) != nil {
				return
			}
			last = time.Now()
			if last.Sub(start) > o.SlowWrite && backlog(traces, cursors) > o.MaxLag {
				_ = st.conn.CloseWith(closeTryLater, "too slow: fetch /api/runs/"+st.run.ID+"/trace", time.Now().Add(time.Second))
				return
			}
		}
		more = pending > 0
		if newVersion != version {
			version = newVersion
			if !st.sendStatus("status") {
				return
			}
		}
		if finished && !more {
			// A run that ended because the server is shutting down (Close
			// closes s.closing before it cancels the runs) says goodbye
			// with 1001, not as a normal end.
			select {
			case <-st.s.closing:
				st.goAway()
				return
			default:
			}
			if !st.sendStatus("done") {
				return
			}
			_ = st.conn.CloseWith(closeNormal, "done", time.Now().Add(o.WriteTimeout))
			// Give the client a moment to answer the close frame.
			t := time.NewTimer(time.Second)
			select {
			case <-readerDone:
			case <-t.C:
			}
			t.Stop()
			return
		}
	}
}

func (st *stream) goAway() {
	_ = st.conn.CloseWith(closeGoingAway, "server shutting down", time.Now().Add(time.Second))
}

// records encodes the records not yet sent as one message, advances the
// cursors, and returns the message (nil if nothing is new), how many
// stored records remain unsent, and the error of a read that failed. Each trace may send its share of MaxBatch,
// or a fifteenth of its backlog (catching up in half a second at the rate
// limit) up to ten times that share, within its share of MaxMessage bytes.
func (st *stream) records(traces []*session.Trace, cursors []int) ([]byte, int, error) {
	o := &st.s.opts
	share := max(o.MaxBatch/len(traces), 1)
	// Each trace's records take at most its share of MaxMessage bytes (and
	// at least one record), so a message stays within about MaxMessage.
	bytesShare := max(o.MaxMessage/len(traces), 1)
	b := append(st.buf[:0], `{"type":"records","batches":[`...)
	n, pending := 0, 0
	for i, t := range traces {
		total := t.Len()
		quota := min(max(share, (total-cursors[i])/15), 10*share)
		if cursors[i] < total {
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"trace":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"from":`...)
			b = strconv.AppendInt(b, int64(cursors[i]), 10)
			// stored: the records the server holds for the trace, so that
			// a page behind them can say it is catching up.
			b = append(b, `,"stored":`...)
			b = strconv.AppendInt(b, int64(total), 10)
			b = append(b, `,"records":[`...)
			from := cursors[i]
			sent, limit := 0, len(b)+bytesShare
			_, err := t.Walk(from, min(total, from+quota), func(j int, rec *solver.Record) bool {
				if sent > 0 && len(b) >= limit {
					return false // the message is full: the rest follows
				}
				if j > from {
					b = append(b, ',')
				}
				b = appendRecord(b, rec, nil)
				sent++
				return true
			})
			if err != nil {
				return nil, 0, err
			}
			cursors[i] += sent
			b = append(b, "]}"...)
			n++
		}
		pending += total - cursors[i]
	}
	b = append(b, "]}"...)
	st.buf = b
	if n == 0 {
		return nil, pending, nil
	}
	return b, pending, nil
}

// clipClose cuts a close frame's reason to the 123 bytes a control frame
// allows, on a rune boundary.
func clipClose(s string) string {
	if len(s) <= 123 {
		return s
	}
	cut := 120
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// backlog counts the stored records not yet sent.
func backlog(traces []*session.Trace, cursors []int) int {
	n := 0
	for i, t := range traces {
		n += t.Len() - cursors[i]
	}
	return n
}

// instanceSig is what a status says of a run's instance: none yet, or one
// built (its size, whether F* is known and whether it has panels).
type instanceSig struct {
	dim, samples, blocks int
	fstar, panels        bool
}

func instanceKey(in scenarios.Info) instanceSig {
	return instanceSig{in.Dim, in.Samples, in.Blocks, in.FStar != nil, in.Panels != nil}
}

// sendStatus sends {"type": typ, "run": status}; the status names the
// worker of a run a worker process took (a PostgreSQL store's).
func (st *stream) sendStatus(typ string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), st.s.opts.WriteTimeout)
	status := st.s.served(ctx, st.run.Status().WithoutPanels())
	cancel()
	msg, err := json.Marshal(struct {
		Type string         `json:"type"`
		Run  session.Status `json:"run"`
	}{typ, status})
	if err != nil {
		st.s.log.Error("encoding the run status", "run", st.run.ID, "err", err)
		_ = st.conn.CloseWith(1011, "cannot encode the run status", time.Now().Add(time.Second))
		return false
	}
	return st.conn.WriteText(msg, time.Now().Add(st.s.opts.WriteTimeout)) == nil
}
