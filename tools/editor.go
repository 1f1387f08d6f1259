package tools

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// EditorSpec is the user's own editor on a file, started at the user's
// request (chat's Ctrl-G): not a tool's process, so it keeps the terminal,
// in the foreground; its environment is still only what Env holds (built
// with BuildEnv under the core allowlist, no secret).
type EditorSpec struct {
	// Command is $VISUAL or $EDITOR as the user set it: a program and
	// arguments separated by spaces ("code --wait", "vim").
	Command string
	// File is the path handed to it as its last argument.
	File string
	// Dir is the working directory. Required.
	Dir string
	// Env is the editor's whole environment. Required.
	Env Env
	// TTY is the terminal it reads and draws on.
	TTY *os.File
}

// ErrNoEditor: neither $VISUAL nor $EDITOR names a program.
var ErrNoEditor = errors.New("no editor: set $VISUAL or $EDITOR")

// EditorCommand returns the editor's command, unstarted, for a caller that
// hands it the terminal (bubbletea's ExecProcess). Unlike Command's
// children it is not put in a session of its own: a full-screen editor
// needs the controlling terminal and its job control.
func EditorCommand(spec EditorSpec) (*exec.Cmd, error) {
	fields := strings.Fields(spec.Command)
	if len(fields) == 0 {
		return nil, ErrNoEditor
	}
	if spec.Dir == "" || spec.Env == nil || spec.TTY == nil {
		return nil, errors.New("spawn editor: directory, environment and terminal are required")
	}
	prog, err := lookPath(fields[0], spec.Env, spec.Dir)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(prog, append(fields[1:], spec.File)...)
	cmd.Args[0] = fields[0]
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env.Environ()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = spec.TTY, spec.TTY, spec.TTY
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	killWithParent(cmd.SysProcAttr)
	return cmd, nil
}
