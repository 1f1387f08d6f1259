package session

import (
	"context"
	"syscall"
	"testing"
	"time"
)

func TestNotifyStopRecordsTheFirstSignal(t *testing.T) {
	ctx, got, stop := NotifyStop(context.Background())
	defer stop()
	if got.Get() != nil || ctx.Err() != nil {
		t.Fatalf("before a signal: got %v, ctx %v", got.Get(), ctx.Err())
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGHUP did not cancel the context")
	}
	if got.Get() != syscall.SIGHUP {
		t.Errorf("got %v, want SIGHUP", got.Get())
	}
	stop()
	stop() // twice is fine
}

func TestNotifyStopEndsWithStop(t *testing.T) {
	ctx, got, stop := NotifyStop(context.Background())
	stop()
	if ctx.Err() == nil || got.Get() != nil {
		t.Errorf("after stop: ctx %v, got %v", ctx.Err(), got.Get())
	}
}
