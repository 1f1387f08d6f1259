package main

import (
	"errors"
	"os"
	"syscall"
)

// The exit code each stop signal (session.StopSignals) ends hush with:
// 128 + the signal.
const exitHangup = 129 // SIGHUP (128 + 1)

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
