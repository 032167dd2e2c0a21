package server

import (
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// Close codes used by the stream.
const (
	closeNormal        = websocket.CloseNormalClosure     // 1000: the run is done
	closeGoingAway     = websocket.CloseGoingAway         // 1001: the server shuts down
	closeTryLater      = websocket.CloseTryAgainLater     // 1013: the client is too slow
	closeInternalError = websocket.CloseInternalServerErr // 1011: the run's records cannot be read
	closeMaxMessage    = 4096                             // the largest message a client may send
)

// wsConn is the one type that knows the websocket library, so the transport
// could change without touching the rest. Writes (WriteText, Ping,
// CloseWith) belong to one goroutine; ReadLoop to another; Close may be
// called from any goroutine.
type wsConn struct {
	c *websocket.Conn
}

var upgrader = websocket.Upgrader{
	ReadBufferSize:  1024,
	WriteBufferSize: 32 << 10,
	// The dashboard is served from the same origin; the default origin check
	// (Origin must match Host) stays on.
}

// upgrade turns the request into a websocket connection. On failure the
// library has already answered the request.
func upgrade(w http.ResponseWriter, r *http.Request) (*wsConn, error) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(closeMaxMessage)
	return &wsConn{c: c}, nil
}

// WriteText sends one text message, failing if it cannot be written by the
// deadline.
func (w *wsConn) WriteText(msg []byte, deadline time.Time) error {
	if err := w.c.SetWriteDeadline(deadline); err != nil {
		return err
	}
	return w.c.WriteMessage(websocket.TextMessage, msg)
}

// Ping sends a ping frame.
func (w *wsConn) Ping(deadline time.Time) error {
	return w.c.WriteControl(websocket.PingMessage, nil, deadline)
}

// CloseWith sends a close frame with the code and reason (best effort).
func (w *wsConn) CloseWith(code int, reason string, deadline time.Time) error {
	return w.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), deadline)
}

// ReadLoop reads and discards client messages until the connection fails or
// is closed, extending the read deadline by pongWait on every pong (the
// library answers pings and close frames while reading). It returns nil on a
// normal close by the peer.
func (w *wsConn) ReadLoop(pongWait time.Duration) error {
	_ = w.c.SetReadDeadline(time.Now().Add(pongWait))
	w.c.SetPongHandler(func(string) error {
		return w.c.SetReadDeadline(time.Now().Add(pongWait))
	})
	for {
		if _, _, err := w.c.NextReader(); err != nil {
			if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived) {
				return nil
			}
			return err
		}
		_ = w.c.SetReadDeadline(time.Now().Add(pongWait))
	}
}

// Close closes the network connection at once; a blocked write or read
// returns with an error.
func (w *wsConn) Close() error {
	err := w.c.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
