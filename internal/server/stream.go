package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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

	// the state of serve's loop
	readerDone <-chan struct{} // closed when the reader ends
	traces     []*session.Trace
	cursors    []int // the next record to send, by trace
	ping       *time.Ticker
	reread     <-chan time.Time // a run followed from the store: read it again
	woken      <-chan struct{}  // the same, when the store says it changed
	follow     bool
	version    uint64      // the status version last sent
	seen       followedSig // what a followed run's status said last
	last       time.Time   // when the last records message went
}

// serve streams the run until it is done, the client goes, or the server
// shuts down: a hello, then, each time the run changes (at most once per
// MinInterval), the records not yet sent and a status when it changed, and
// a done once every trace has ended and every record is sent.
func (st *stream) serve() {
	sub := st.run.Subscribe()
	defer sub.Close()
	defer st.startReader()()
	st.version = st.run.Version()
	if !st.sendStatus("hello") {
		return
	}
	st.traces = st.run.Traces()
	st.cursors = make([]int, len(st.traces))
	st.ping = time.NewTicker(st.s.opts.PingInterval)
	defer st.ping.Stop()
	defer st.followStore()()
	st.seen = st.followed()
	more := true // send what is stored at once
	for {
		select {
		case <-st.s.closing: // also while a backlog keeps the loop busy
			st.goAway()
			return
		default:
		}
		if !more && !st.waitForChange(sub) {
			return
		}
		if !st.coalesce() || !st.pingWhileBusy() {
			return
		}
		newVersion, finished := st.observe()
		pending, ok := st.sendRecords()
		if !ok {
			return
		}
		more = pending > 0
		if newVersion != st.version {
			st.version = newVersion
			if !st.sendStatus("status") {
				return
			}
		}
		if finished && !more {
			st.finish()
			return
		}
	}
}

// startReader starts the connection's reader (answering pings and close
// frames, noticing a client that went away); the function it returns
// closes the connection and waits for the reader.
func (st *stream) startReader() func() {
	done := make(chan struct{})
	st.readerDone = done
	go func() {
		defer close(done)
		_ = st.conn.ReadLoop(st.s.opts.PongWait)
		_ = st.conn.Close() // unblock a writer stuck on a dead peer
	}()
	return func() {
		_ = st.conn.Close()
		<-done
	}
}

// followStore sets up reading a run live on a worker elsewhere again from
// the store, on a timer and on the store's wakeups; the function it
// returns stops both.
func (st *stream) followStore() func() {
	st.follow = st.s.following(st.run)
	if !st.follow {
		return func() {}
	}
	t := time.NewTicker(FollowInterval)
	st.reread = t.C
	woken, stop := st.s.wakeups(st.run.ID)
	st.woken = woken
	return func() {
		t.Stop()
		stop()
	}
}

// waitForChange waits until the run changes (or a followed run is read
// again), pinging the client meanwhile; false when the stream is to end.
func (st *stream) waitForChange(sub *session.Subscription) bool {
	for {
		select {
		case <-sub.C:
		case <-st.reread:
			st.run = st.s.reread(st.run)
			st.traces = st.run.Traces()
		case <-st.woken:
			st.run = st.s.reread(st.run)
			st.traces = st.run.Traces()
		case <-st.ping.C:
			if st.conn.Ping(time.Now().Add(st.s.opts.WriteTimeout)) != nil {
				return false
			}
			continue
		case <-st.readerDone:
			return false
		case <-st.s.closing:
			st.goAway()
			return false
		}
		return true
	}
}

// coalesce waits out MinInterval since the last records message; false
// when the stream is to end.
func (st *stream) coalesce() bool {
	wait := st.s.opts.MinInterval - time.Since(st.last)
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-st.readerDone:
		return false
	case <-st.s.closing:
		st.goAway()
		return false
	}
}

// pingWhileBusy pings when a ping is due while the loop has records to
// send (the reader's deadline depends on pongs); false when the client is
// gone.
func (st *stream) pingWhileBusy() bool {
	select {
	case <-st.ping.C:
		return st.conn.Ping(time.Now().Add(st.s.opts.WriteTimeout)) == nil
	default:
		return true
	}
}

// observe returns the run's status version and whether it has finished,
// read before its records (a finished trace has stored them all). A run
// followed from the store is finished once its stored status says so, and
// its version moves when its signature (followedSig) does.
func (st *stream) observe() (uint64, bool) {
	if !st.follow {
		v := st.run.Version()
		return v, st.run.Finished()
	}
	v := st.version
	if f := st.followed(); f != st.seen {
		st.seen = f
		v = st.version + 1
	}
	return v, !store.Live(st.seen.run)
}

// sendRecords sends the records not yet sent (one message) and returns how
// many stored records remain unsent; false when the stream is to end: the
// client is gone or too slow, or the stored records cannot be read.
func (st *stream) sendRecords() (int, bool) {
	o := &st.s.opts
	msg, pending, err := st.records(st.traces, st.cursors)
	if err != nil {
		// The stored records cannot all be read: say so and end the
		// stream rather than send a done over missing records.
		st.s.log.Error("streaming a run's records", "run", st.run.ID, "err", err)
		_ = st.conn.CloseWith(closeInternalError, clipClose("reading the run's records failed: "+err.Error()), time.Now().Add(time.Second))
		return 0, false
	}
	if msg == nil {
		return pending, true
	}
	start := time.Now()
	if st.conn.WriteText(msg, start.Add(o.WriteTimeout)) != nil {
		return 0, false
	}
	st.last = time.Now()
	if st.last.Sub(start) > o.SlowWrite && backlog(st.traces, st.cursors) > o.MaxLag {
		_ = st.conn.CloseWith(closeTryLater, "too slow: fetch /api/runs/"+st.run.ID+"/trace", time.Now().Add(time.Second))
		return 0, false
	}
	return pending, true
}

// finish ends the stream of a finished run whose records are all sent: a
// done and a normal close. A run that ended because the server is shutting
// down (Close closes s.closing before it cancels the runs) says goodbye
// with 1001 instead.
func (st *stream) finish() {
	select {
	case <-st.s.closing:
		st.goAway()
		return
	default:
	}
	if !st.sendStatus("done") {
		return
	}
	_ = st.conn.CloseWith(closeNormal, "done", time.Now().Add(st.s.opts.WriteTimeout))
	// Give the client a moment to answer the close frame.
	t := time.NewTimer(time.Second)
	select {
	case <-st.readerDone:
	case <-t.C:
	}
	t.Stop()
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

// followedSig is what the status of a run followed from the store says
// that a worker changes while the run goes on: the run's status, its
// traces' (a worker writes a trace's end as the trace ends, while the
// others go on) and its instance's description (a worker builds the
// instance after it took the run).
type followedSig struct {
	run, traces string
	instance    instanceSig
}

// followed reads the followed run's signature.
func (st *stream) followed() followedSig {
	var b strings.Builder
	for _, t := range st.traces {
		b.WriteString(t.Status())
		b.WriteByte(',')
	}
	return followedSig{st.run.RunStatus(), b.String(), instanceKey(st.run.Info())}
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
