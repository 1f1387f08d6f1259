// Package ui is hush's chat terminal: a line editor with history, slash
// commands answered locally, Markdown rendered as it streams, tool calls in
// a compact form, a spinner and a status line with the server's usage. It
// draws inline (bubbletea without the alternate screen), so the
// conversation stays in the terminal's scrollback.
//
// It renders only what the executor hands it — text already redacted and
// sanitized — and sanitizes call arguments and results itself, so no model
// or tool string can drive the terminal. It never asks the terminal
// anything (colours are decided from NO_COLOR and TERM), starts no process,
// and writes one file: the prompt history, 0600, redacted before it is
// written. Scripts and screen readers keep the plain line output of
// package main (`--plain`, or input that is not a terminal).
package ui
