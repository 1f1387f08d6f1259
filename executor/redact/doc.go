// Package redact owns the scrubbing of secret values from tool output.
//
// Every byte a tool returns passes a [Redactor] before it reaches the model,
// the screen, the transcript or a log; the executor installs it as a
// decorator so no tool can forget it. A value is replaced by
// "[REDACTED:NAME]" wherever it appears literally, base64-encoded (standard
// and URL alphabets, padded or not, at any alignment inside a larger base64
// stream, on one line or wrapped at 12 columns or more), URL-encoded
// (url.QueryEscape, url.PathEscape, or any choice of %XX in either case),
// as continuous hex in either case (xxd -p, od -An -tx1 joined), JSON-escaped
// or shell-quoted (printf %q, and both ways of escaping a quote inside
// single quotes), and also when it straddles
// two writes of a stream. Fixed forms are literal patterns; the varying ones
// are normalisers run only around their trigger bytes (normal.go), so the
// cost of clean output does not grow with the number of forms.
//
// The redactor matches bytes as they are: a value interrupted by an escape
// sequence (grep --color highlighting part of it) is not a match. Feed it
// output that executor/outbuf has sanitised, which removes such sequences.
//
// This package must never disclose a secret value: it does not log, its
// errors never contain output bytes, and its types print as counts and names
// only (fmt, slog). It does not decide which values are secret — the vault
// does — and it does not truncate or sanitise output; executor/outbuf does.
//
// The matcher is hand-written rather than taken from an Aho–Corasick
// library. The two on the module proxy that report match positions
// (coregx/ahocorasick, petar-dambovaliev/aho-corasick) both gave wrong
// leftmost-longest results — for "bcd" and "cdefgh" in "xbcdefgh" one
// returned the later, longer match, the other two overlapping matches —
// neither can carry its state across writes, and on 1,000 secrets with their
// encodings they built 20–110 MB automata and scanned at 30–250 MB/s here.
// Secrets are long and random, which a sampling filter exploits: clean
// output is looked at once per dozen bytes or so (see matcher).
package redact
