//go:build !linux

package vault

// HideTyping does nothing here: the read that follows the prompt turns
// the echo off (see echo_linux.go).
func HideTyping(fd int) (restore func()) { return func() {} }
