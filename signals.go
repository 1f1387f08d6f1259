package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// The signals that end a turn the way Ctrl-C does — the running tool and
// its processes are stopped first — and the exit code each ends hush with:
// 128 + the signal. SIGHUP is the terminal closing (a closed ssh session,
// a closed window); SIGTERM is a supervisor, CI's timeout, `kill`.
const exitHangup = 129 // SIGHUP (128 + 1)

var stopSignals = []os.Signal{os.Interrupt, syscall.SIGHUP, syscall.SIGTERM}

// stopSignal is the first stop signal hush received.
type stopSignal struct {
	mu  sync.Mutex
	sig os.Signal
}

func (s *stopSignal) set(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sig == nil {
		s.sig = sig
	}
}

func (s *stopSignal) get() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sig
}

// notifyStop returns a context cancelled by the first stop signal, and what
// that signal was; stop ends the notification.
func notifyStop(parent context.Context) (ctx context.Context, got *stopSignal, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	got = &stopSignal{}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
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

// signalExit is the error a command that was stopped by sig returns: exit
// code 128 + sig, and one sentence.
func signalExit(sig os.Signal) *exitError {
	switch sig {
	case syscall.SIGHUP:
		return &exitError{exitHangup, errors.New("the terminal closed (SIGHUP); the running tool was stopped")}
	case syscall.SIGTERM:
		return &exitError{exitTerminated, errors.New("terminated (SIGTERM); the running tool was stopped")}
	}
	return &exitError{exitInterrupted, errors.New("interrupted; the running tool was stopped")}
}
