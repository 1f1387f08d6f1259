package executor

import (
	"context"

	"github.com/hushcli/hush/executor/provider"
)

// Turn sends prompt after history and runs the conversation to a final
// answer. It returns the new messages (to append to history).
func (a *Agent) Turn(ctx context.Context, history []provider.Message, prompt string) ([]provider.Message, error) {
	r, err := a.RunTurn(ctx, history, prompt)
	return r.Messages, err
}
