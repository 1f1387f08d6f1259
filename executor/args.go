package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// DecodeArgs decodes a tool call's arguments into v, refusing unknown fields
// and trailing data, so a misspelt argument is reported to the model rather
// than silently ignored.
func DecodeArgs(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad arguments: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("bad arguments: trailing data after the JSON object")
	}
	return nil
}

// CallTimeout is how long one call may run: the call's own
// timeout_seconds if it gave one, else the configured default (fallback
// when that is zero), never more than max when max is set.
func CallTimeout(configured, fallback, max time.Duration, seconds int) time.Duration {
	timeout := configured
	if timeout <= 0 {
		timeout = fallback
	}
	if seconds > 0 {
		timeout = time.Duration(seconds) * time.Second
	}
	if max > 0 && timeout > max {
		timeout = max
	}
	return timeout
}
