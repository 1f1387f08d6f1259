//go:build !linux

package mcp

// exitedUnreaped is Linux's; elsewhere the reaper and the end of the
// server's stdout tell.
func exitedUnreaped(int) bool { return false }
