package selftest

import (
	"encoding/hex"
	"fmt"
)

// The audit's tools report the raw bytes they read in an encoding no
// redactor knows, so that what they saw reaches the audit whole: the
// redactor rightly scrubs a secret's hex, base64 and URL forms from tool
// output, and a report in one of those forms would lose exactly the leak it
// reports. Each byte is sent as the hex of its value plus one (mod 256) —
// not a form any tool or person prints a secret in.

// encodeRaw renders raw bytes for a report.
func encodeRaw(b []byte) string {
	shifted := make([]byte, len(b))
	for i, c := range b {
		shifted[i] = c + 1
	}
	return hex.EncodeToString(shifted)
}

// decodeRaw reverses encodeRaw.
func decodeRaw(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("the report did not decode: %w", err)
	}
	for i := range b {
		b[i]--
	}
	return b, nil
}

// shellEncode is encodeRaw as a shell filter (od and awk, which every
// image with a shell has, busybox included): stdin to one line of stdout.
const shellEncode = `od -An -tu1 -v | awk '{for(i=1;i<=NF;i++) printf "%02x", ($i+1)%256}'`
