package session

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// StopSignals are the signals that end a turn the way Ctrl-C does — the
// running tool and its processes are stopped first. SIGHUP is the terminal
// closing (a closed ssh session, a closed window); SIGTERM is a supervisor,
// CI's timeout, `kill`.
var StopSignals = []os.Signal{os.Interrupt, syscall.SIGHUP, syscall.SIGTERM}

// StopSignal is the first stop signal hush received.
type StopSignal struct {
	mu  sync.Mutex
	sig os.Signal
}

func (s *StopSignal) set(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sig == nil {
		s.sig = sig
	}
}

// Get is the signal received, nil before one.
func (s *StopSignal) Get() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sig
}

// NotifyStop returns a context cancelled by the first stop signal, and what
// that signal was; stop ends the notification.
func NotifyStop(parent context.Context) (ctx context.Context, got *StopSignal, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	got = &StopSignal{}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, StopSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			got.set(s)
			cancel()
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, got, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel()
		})
	}
}
