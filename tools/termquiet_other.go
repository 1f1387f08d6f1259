//go:build !linux

package tools

// RestoreTerm does nothing here: hush keeps TERM quiet during package
// initialisation on Linux only (termquiet_linux.go).
func RestoreTerm() {}
