//go:build !linux

package termquiet

// Restore does nothing here: hush keeps TERM quiet during package
// initialisation on Linux only (termquiet_linux.go).
func Restore() {}
