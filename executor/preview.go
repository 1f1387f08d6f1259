package executor

import (
	"context"
	"encoding/json"
)

// Previewer is an optional capability of a tool: it says, before the gate
// is asked, what a call will touch, so the person deciding sees that —
// the resolved path of a read, the complete diff of an edit — rather than
// the model's raw arguments. The file tools implement it.
//
// Preview must not change anything. An error refuses the call without
// asking anyone (a masked path, an edit whose old text is absent): there
// is nothing to approve. The Preview that was shown is handed back to Run
// in ToolContext.Preview, so what the user approved is what runs.
type Previewer interface {
	Preview(ctx context.Context, tc *ToolContext, args json.RawMessage) (Preview, error)
}

// Preview is what a call will do, as shown in its gate request.
type Preview struct {
	// Detail replaces the raw arguments as the request's detail, e.g.
	// "read /etc/hosts".
	Detail string
	// Path is the resolved file (or directory) the call touches; a
	// session choice can be remembered for it or for its directory.
	Path string
	// Diff is the unified diff of exactly what a write will change.
	Diff string
	// Default is what the gate decides when no configured rule does:
	// empty asks as for any tool, Allow passes a routine call (a read
	// inside the project), Deny refuses one only a rule may allow (a write
	// outside the project). DefaultReason explains either in a sentence.
	Default       Decision
	DefaultReason string
	// HTTP is the request an http call will send, shown whole to the
	// person deciding; a session choice then allows its host.
	HTTP *HTTPCall
	// State is the tool's own record of what was previewed (the file's
	// content the diff was made from), for Run.
	State any
}
