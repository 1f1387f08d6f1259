//go:build linux && !cgo

package tools

// sandboxInitBuilt: without cgo the sandbox's C init is not linked in.
const sandboxInitBuilt = false
