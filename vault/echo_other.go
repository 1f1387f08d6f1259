//go:build !linux

package vault

// HideTyping does nothing here: the read that follows the prompt turns
// the echo off (see echo_linux.go).
func HideTyping(fd int) (restore func()) { return func() {} }

// ReadKeys does nothing here: a form's own raw mode reads its keys (see
// echo_linux.go).
func ReadKeys(fd int) (restore func()) { return func() {} }
