package wizard

import (
	"context"
	"errors"
	"io"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/huh"
)

// SessionOption is one session offered by PickSession.
type SessionOption struct {
	ID    string
	Label string // start, turns and first prompt, on one line
}

// ErrNoSessionPicked: the person left the picker without choosing.
var ErrNoSessionPicked = errors.New("no session picked")

// PickSession asks which session to resume.
func PickSession(ctx context.Context, in io.Reader, out io.Writer, accessible bool, sessions []SessionOption) (string, error) {
	opts := make([]huh.Option[string], 0, len(sessions))
	for _, s := range sessions {
		opts = append(opts, huh.NewOption(sanitizeLine(s.Label), s.ID))
	}
	var id string
	sel := huh.NewSelect[string]().Title("Resume which session?").Options(opts...).Value(&id).Height(min(len(opts)+2, 12))
	// Esc leaves the picker like Ctrl-C (huh's default quits on Ctrl-C
	// only, and Esc did nothing at all).
	km := huh.NewDefaultKeyMap()
	km.Quit = key.NewBinding(key.WithKeys("ctrl+c", "esc"))
	form := huh.NewForm(huh.NewGroup(sel)).WithInput(in).WithOutput(out).WithAccessible(accessible).WithShowHelp(false).WithKeyMap(km)
	if err := form.RunWithContext(ctx); err != nil {
		if errors.Is(err, huh.ErrUserAborted) {
			return "", ErrNoSessionPicked
		}
		return "", err
	}
	return id, nil
}
