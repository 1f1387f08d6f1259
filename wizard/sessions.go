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

// PickSession asks which session to resume; typing filters the list.
func PickSession(ctx context.Context, in io.Reader, out io.Writer, accessible bool, sessions []SessionOption) (string, error) {
	id, err := Pick(ctx, in, out, accessible, "Resume which session? (type to filter)", sessions, "")
	if errors.Is(err, ErrNothingPicked) {
		return "", ErrNoSessionPicked
	}
	return id, err
}

// ErrNothingPicked: the person left a picker without choosing.
var ErrNothingPicked = errors.New("nothing picked")

// Pick asks for one of options (by ID), with current selected first;
// typing filters the list, Enter picks, Esc or Ctrl-C leaves it
// (ErrNothingPicked).
func Pick(ctx context.Context, in io.Reader, out io.Writer, accessible bool, title string, options []SessionOption, current string) (string, error) {
	opts := make([]huh.Option[string], 0, len(options))
	for _, s := range options {
		opts = append(opts, huh.NewOption(sanitizeLine(s.Label), s.ID).Selected(s.ID == current))
	}
	var id string
	sel := huh.NewSelect[string]().Title(title).Options(opts...).Value(&id).Height(min(len(opts)+3, 13)).Filtering(!accessible)
	if !accessible {
		// While it filters, huh shows the filter's input where the title
		// was: the question stays readable as the description.
		sel = sel.Title("").Description(title)
	}
	// Esc leaves the picker like Ctrl-C (huh's default quits on Ctrl-C
	// only, and Esc did nothing at all).
	km := huh.NewDefaultKeyMap()
	km.Quit = key.NewBinding(key.WithKeys("ctrl+c", "esc"))
	form := huh.NewForm(huh.NewGroup(sel)).WithInput(in).WithOutput(out).WithAccessible(accessible).WithShowHelp(false).WithKeyMap(km)
	if err := form.RunWithContext(ctx); err != nil {
		if errors.Is(err, huh.ErrUserAborted) {
			return "", ErrNothingPicked
		}
		return "", err
	}
	return id, nil
}
