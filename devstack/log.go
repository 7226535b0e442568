package devstack

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// minLevel is the quietest level the embedded server may emit. Temporal logs
// every shard movement, membership change and task queue load at INFO, which
// buries the application's own output, so only warnings and errors pass.
const minLevel = slog.LevelWarn

// newFilteredLogger returns a logger that forwards records at minLevel and
// above to l, or discards everything when l is nil.
func newFilteredLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(levelFilter{next: l.Handler()})
}

// levelFilter drops records below minLevel before they reach the wrapped
// handler, regardless of how permissive that handler is.
type levelFilter struct {
	next slog.Handler
}

func (f levelFilter) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= minLevel && f.next.Enabled(ctx, level)
}

func (f levelFilter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < minLevel {
		return nil
	}
	return f.next.Handle(ctx, r)
}

func (f levelFilter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return levelFilter{next: f.next.WithAttrs(attrs)}
}

func (f levelFilter) WithGroup(name string) slog.Handler {
	return levelFilter{next: f.next.WithGroup(name)}
}

// serverLogger adapts an slog.Logger to the Temporal server's logging
// interface so the server never writes to stdout or stderr on its own.
//
// It deliberately does not implement log.SLogWrapper: the server would then
// hand the raw slog.Logger to components that log through slog directly.
// Going through this adapter keeps them behind the same level filter.
type serverLogger struct {
	log *slog.Logger
	// stopping is set once shutdown begins. Services stop one after another,
	// and each complains at WARN that the ones already gone are unreachable;
	// that is expected, so only errors get through from then on.
	stopping *atomic.Bool
}

var _ log.Logger = serverLogger{}

func (s serverLogger) Debug(msg string, tags ...tag.Tag) { s.emit(slog.LevelDebug, msg, tags) }
func (s serverLogger) Info(msg string, tags ...tag.Tag)  { s.emit(slog.LevelInfo, msg, tags) }
func (s serverLogger) Warn(msg string, tags ...tag.Tag)  { s.emit(slog.LevelWarn, msg, tags) }
func (s serverLogger) Error(msg string, tags ...tag.Tag) { s.emit(slog.LevelError, msg, tags) }

// DPanic only panics in development builds of zap; production servers log it.
func (s serverLogger) DPanic(msg string, tags ...tag.Tag) { s.emit(slog.LevelError, msg, tags) }

// Panic keeps the server's contract that the call does not return, so code
// after it (often a nil dereference) never runs. The panic is recoverable,
// unlike os.Exit, which lets Start turn start-up failures into errors.
func (s serverLogger) Panic(msg string, tags ...tag.Tag) {
	s.emit(slog.LevelError, msg, tags)
	panic(fatalError{msg: msg, tags: tags})
}

// Fatal would exit the whole process with the server's default logger. An
// embedded server must not do that to its host, so it panics like Panic.
func (s serverLogger) Fatal(msg string, tags ...tag.Tag) {
	s.emit(slog.LevelError, msg, tags)
	panic(fatalError{msg: msg, tags: tags})
}

func (s serverLogger) emit(level slog.Level, msg string, tags []tag.Tag) {
	if level < slog.LevelError && s.stopping != nil && s.stopping.Load() {
		return
	}
	ctx := context.Background()
	if !s.log.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, len(tags)+1)
	attrs = append(attrs, slog.String("component", "temporal"))
	for _, t := range tags {
		attrs = append(attrs, slog.Any(t.Key(), t.Value()))
	}
	s.log.LogAttrs(ctx, level, msg, attrs...)
}

// fatalError is the panic value raised by serverLogger.Panic and Fatal.
type fatalError struct {
	msg  string
	tags []tag.Tag
}

func (e fatalError) Error() string {
	s := "temporal server: " + e.msg
	for _, t := range e.tags {
		s += fmt.Sprintf(" %s=%v", t.Key(), t.Value())
	}
	return s
}
