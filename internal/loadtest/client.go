package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// client starts one run and follows it as its role says; it returns the
// run's id ("" when the run could not be created).
func client(ctx context.Context, hc *http.Client, base string, iters int, role string, t *tally) string {
	id, ok := createRun(ctx, hc, base, iters, t)
	if !ok {
		return ""
	}
	ws := dialStream(ctx, base, id, t)
	if ws == nil {
		return id
	}
	defer ws.Close()
	// The test's deadline ends the stream too.
	stop := context.AfterFunc(ctx, func() { _ = ws.Close() })
	defer stop()
	var last time.Time
	batches := 0
	cursor := map[int]int{}
	for {
		_ = ws.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, msg, err := ws.ReadMessage()
		if err != nil {
			if !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				t.fail("stream read: " + errKind(err))
			}
			return id
		}
		var m streamMessage
		if err := json.Unmarshal(msg, &m); err != nil {
			t.fail("stream message: not JSON")
			return id
		}
		if m.Type != "records" {
			if m.Type == "done" {
				_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
			}
			continue
		}
		checkBatches(m, cursor, t)
		now := time.Now()
		batches++
		if role == "live" && !last.IsZero() {
			t.mu.Lock()
			t.gaps = append(t.gaps, now.Sub(last))
			t.mu.Unlock()
		}
		last = now
		switch {
		case role == "disconnect" && batches == 2:
			return id // the deferred Close drops the connection without a close frame
		case role == "cancel" && batches == 1:
			cancelRun(ctx, hc, base, id, t)
		}
	}
}

// createRun starts a client's run: two replications of vanilla
// Frank-Wolfe on the toy polygon, which zig-zags, so that every trace runs
// its iterations. It returns the run's id, and false when it was refused.
func createRun(ctx context.Context, hc *http.Client, base string, iters int, t *tally) (string, bool) {
	body := fmt.Sprintf(`{"problem":"toy-polygon","algorithms":[{"algo":"fw"}],"replications":2,"iters":%d,"eval_every":100}`, iters)
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/runs", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	t.req()
	resp, err := hc.Do(req)
	if err != nil {
		t.fail("create: " + errKind(err))
		return "", false
	}
	var out struct{ ID, Error string }
	_ = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.fail("create: HTTP " + strconv.Itoa(resp.StatusCode))
		return "", false
	}
	return out.ID, true
}

// dialStream subscribes to a run's stream (nil when the dial failed). A
// run waiting in the queue sends nothing but the server's pings: each ping
// extends the read deadline, as a browser keeps a quiet socket.
func dialStream(ctx context.Context, base, id string, t *tally) *websocket.Conn {
	t.req()
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	ws, wresp, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws/runs/"+id, nil)
	if wresp != nil && wresp.Body != nil {
		wresp.Body.Close()
	}
	if err != nil {
		t.fail("stream dial: " + errKind(err))
		return nil
	}
	ws.SetPingHandler(func(data string) error {
		_ = ws.SetReadDeadline(time.Now().Add(30 * time.Second))
		err := ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		return err
	})
	return ws
}

// streamMessage is the part of a stream's message a client checks.
type streamMessage struct {
	Type    string
	Batches []struct {
		Trace, From int
		Records     []struct{ K int }
	}
}

// checkBatches checks that each trace's batches start where its last
// ended (cursor) and hold their records in order, and moves the cursor.
func checkBatches(m streamMessage, cursor map[int]int, t *tally) {
	for _, b := range m.Batches {
		if b.From != cursor[b.Trace] {
			t.fail("stream: a batch does not start where the last ended")
		}
		for j, r := range b.Records {
			if r.K != b.From+j {
				t.fail("stream: records out of order")
				break
			}
		}
		cursor[b.Trace] = b.From + len(b.Records)
	}
}

// cancelRun cancels a client's run, which must be accepted.
func cancelRun(ctx context.Context, hc *http.Client, base, id string, t *tally) {
	req, _ := http.NewRequestWithContext(ctx, "DELETE", base+"/api/runs/"+id, nil)
	t.req()
	resp, err := hc.Do(req)
	if err != nil {
		t.fail("cancel: " + errKind(err))
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.fail("cancel: HTTP " + strconv.Itoa(resp.StatusCode))
	}
}

// errKind names the kind of a failed request, for the report's errors.
func errKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case websocket.IsUnexpectedCloseError(err):
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return "closed with " + strconv.Itoa(ce.Code)
		}
	case errors.Is(err, websocket.ErrBadHandshake):
		return "refused"
	}
	if strings.Contains(err.Error(), "connection reset") {
		return "connection reset"
	}
	return "other"
}

// getJSON reads a JSON answer of the server into v.
func getJSON(ctx context.Context, hc *http.Client, url string, v any) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
