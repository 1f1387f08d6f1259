package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
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
