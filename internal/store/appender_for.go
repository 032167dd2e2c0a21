package store

import (
	"context"
	"time"
)

// recordWriter is what an Appender writes to: any Backend.
type recordWriter interface {
	AppendBatches(ctx context.Context, id string, trace int, bs []Batch) error
}

// NewAppenderFor is NewAppender for any Backend: it streams run id's
// records to b, writing every interval (≤ 0: DefaultFlushInterval).
func NewAppenderFor(b Backend, id string, interval time.Duration) *Appender {
	if s, ok := b.(*Store); ok {
		return s.NewAppender(id, interval)
	}
	if interval <= 0 {
		interval = DefaultFlushInterval
	}
	a := &Appender{s: b, id: id, interval: interval, pending: map[int]*traceBatches{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go a.loop()
	return a
}
