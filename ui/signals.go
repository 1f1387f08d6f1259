package ui

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// RunStoppable is Run with the stop signals handled: SIGINT interrupts the
// running turn (as Ctrl-C does), SIGHUP (the terminal closed) or SIGTERM
// stops the chat, and after waiting up to wait for the running turn — its
// tool is stopped first — returns the signal. stoppedBy is nil when the
// chat ended otherwise.
func (c *Chat) RunStoppable(sigs []os.Signal, wait time.Duration) (stoppedBy os.Signal, err error) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	defer signal.Stop(ch)
	var terminated sync.Once
	go func() {
		for s := range ch {
			if s == syscall.SIGTERM || s == syscall.SIGHUP {
				terminated.Do(func() { stoppedBy = s })
				c.Stop()
				return
			}
			c.Interrupt()
		}
	}()
	err = c.Run()
	terminated.Do(func() {})
	if stoppedBy != nil {
		c.WaitTurns(wait)
	}
	return stoppedBy, err
}
