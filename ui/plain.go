package ui

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/outbuf"
	"github.com/hushcli/hush/executor/redact"
	"github.com/hushcli/hush/executor/transcript"
)

// Plain is the line-by-line chat (`hush chat --plain`, or input that is
// not a terminal): for scripts, screen readers and terminals that cannot
// draw the UI. Ctrl-C stops the running turn; at the prompt it says how to
// leave, and a second one within two seconds ends the chat, as in the full
// UI. /exit, /quit or the end of input also end it.
type Plain struct {
	In    io.Reader
	Out   io.Writer
	Agent *executor.Agent
	Conv  *transcript.Conversation
	// Redact scrubs secrets from an error before it is shown, and from a
	// prompt: one that holds a vault value is sent redacted, or, with Ask,
	// as the user chooses.
	Redact func(string) string
	// Ask says the input is a person at a terminal, who is asked what to
	// send when a prompt holds a vault value.
	Ask bool
	// Command runs /resume and /compact.
	Command func(ctx context.Context, out io.Writer, cmd, arg string)
	// Signals are the stop signals; on SIGHUP or SIGTERM the running turn
	// ends as on Ctrl-C, then Stop is called (it exits hush).
	Signals []os.Signal
	Stop    func(os.Signal)
}

// Run reads and runs prompts until the input ends.
func (p Plain) Run() error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, p.Signals...)
	defer signal.Stop(sigs)
	var mu sync.Mutex
	var cancelTurn context.CancelFunc
	var turnDone chan struct{} // closed when the running turn has returned
	quit := make(chan struct{})
	leave := make(chan struct{}) // closed by a second Ctrl-C at the prompt
	var lastCtrlC time.Time      // the last Ctrl-C at the prompt; zero once a line is read
	go func() {
		for {
			select {
			case <-quit:
				return
			case s := <-sigs:
				mu.Lock()
				c, done := cancelTurn, turnDone
				mu.Unlock()
				if s == syscall.SIGHUP || s == syscall.SIGTERM {
					// The terminal closed, or hush was told to stop: end
					// the turn as Ctrl-C would (its tools' processes are
					// killed), then stop background processes and MCP
					// servers, then exit 129 / 143.
					if c != nil {
						c()
						select {
						case <-done:
						case <-time.After(10 * time.Second):
						}
					}
					p.Stop(s)
					return
				}
				if c != nil {
					c()
					continue
				}
				mu.Lock()
				again := !lastCtrlC.IsZero() && time.Since(lastCtrlC) < 2*time.Second
				lastCtrlC = time.Now()
				mu.Unlock()
				if again {
					fmt.Fprintln(p.Out)
					close(leave)
					return
				}
				fmt.Fprint(p.Out, "\n(press Ctrl-C again within 2 s to exit, or Ctrl-D)\n› ")
			}
		}
	}()
	defer close(quit)

	in := bufio.NewReader(p.In)
	for {
		fmt.Fprint(p.Out, "› ")
		// One read at a time, and only at the prompt: a permission
		// question during a turn reads the same input.
		read := make(chan lineRead, 1)
		go func() {
			line, err := in.ReadString('\n')
			read <- lineRead{line, err}
		}()
		var r lineRead
		select {
		case r = <-read:
		case <-leave:
			return nil
		}
		line, err := r.line, r.err
		if err != nil && line == "" {
			fmt.Fprintln(p.Out)
			return nil // Ctrl-D or end of input
		}
		mu.Lock()
		lastCtrlC = time.Time{}
		mu.Unlock()
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if line == "/exit" || line == "/quit" {
			return nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		mu.Lock()
		cancelTurn, turnDone = cancel, done
		mu.Unlock()
		endTurn := func() {
			mu.Lock()
			cancelTurn, turnDone = nil, nil
			mu.Unlock()
			close(done)
		}
		if isCommand(line) {
			// Answered here, never sent to the model (a /help that
			// reached it could run a tool).
			if cmd, arg, _ := strings.Cut(line, " "); cmd == "/resume" || cmd == "/compact" {
				p.Command(ctx, p.Out, cmd, strings.TrimSpace(arg))
			} else {
				p.slash(cmd)
			}
			endTurn()
			cancel()
			continue
		}
		if strings.HasPrefix(line, "//") {
			line = line[1:] // "//x" sends "/x"
		}
		if red := p.Redact(line); !p.chooseSecret(in, &line, red) {
			endTurn()
			cancel()
			continue
		}
		res, err := p.Agent.RunTurn(ctx, p.Conv.Messages(), strings.TrimSpace(line))
		p.Conv.Add(res.Turn, res.Messages)
		endTurn()
		switch {
		case ctx.Err() != nil:
			fmt.Fprintln(p.Out, "\n(turn cancelled; the tool's processes were stopped)")
		case err != nil:
			fmt.Fprintf(p.Out, "\nhush: %s\n", outbuf.Sanitize(p.Redact(err.Error())))
		default:
			fmt.Fprintln(p.Out)
			if p.Agent.NeedsCompaction(p.Conv, res.Context) {
				fmt.Fprintln(p.Out, "The conversation is near the model's context window ([compaction] in config.toml); compacting…")
				p.Command(ctx, p.Out, "/compact", "")
			}
		}
		cancel()
	}
}

// chooseSecret decides what to send of a prompt whose redacted form red
// differs from *line by a vault value: without Ask, red, said on Out;
// with Ask, the user's choice. It returns false when nothing is to be
// sent (the user will edit it).
func (p Plain) chooseSecret(in *bufio.Reader, line *string, red string) bool {
	names := redact.Names(*line, red)
	if len(names) == 0 {
		return true
	}
	if !p.Ask {
		fmt.Fprintf(p.Out, "(your message contains the value of %s: it is sent as %s)\n", strings.Join(names, ", "), redact.Placeholders(names))
		*line = red
		return true
	}
	fmt.Fprintf(p.Out, "your message contains the value of %s — send %s instead (Enter), send it as typed (a), or edit (e): ",
		strings.Join(names, ", "), redact.Placeholders(names))
	answer, _ := in.ReadString('\n')
	switch strings.TrimSpace(answer) {
	case "":
		*line = red
		return true
	case "a", "A":
		return true
	}
	fmt.Fprintln(p.Out, "(not sent: type it again)")
	return false
}

type lineRead struct {
	line string
	err  error
}

// slash answers the slash commands plain chat has besides /resume,
// /compact and /exit; the rest are the full UI's.
func (p Plain) slash(cmd string) {
	switch cmd {
	case "/help":
		fmt.Fprint(p.Out, "Commands (answered by hush, never sent to the model):\n"+
			"  /clear         start a new conversation (the model forgets the earlier turns)\n"+
			"  /compact [N]   replace older turns by a summary the model writes (keep the last N verbatim)\n"+
			"  /resume [ID]   switch to an earlier session of this project\n"+
			"  /exit          leave hush (also /quit, Ctrl-D)\n"+
			"/model, /tools and /usage are in the full chat (without --plain, at a terminal). Start a message with // to send it to the model as /…\n")
	case "/clear":
		*p.Conv = transcript.Conversation{}
		fmt.Fprintln(p.Out, "(new conversation: the model remembers nothing of the earlier turns)")
	case "/model", "/tools", "/usage":
		fmt.Fprintf(p.Out, "%s is in the full chat only (without --plain, at a terminal); /help lists what works here\n", cmd)
	default:
		fmt.Fprintf(p.Out, "unknown command %s — /help lists the commands; start a message with // to send it to the model as /…\n", outbuf.Sanitize(cmd))
	}
}
