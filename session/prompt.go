package session

// The system prompt and the project instructions (AGENTS.md) it carries.
// Everything here builds text from what it is given; the one thing it
// reads itself is AGENTS.md files, and the one thing it runs is `git
// status`, through the spawn layer with the core environment.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hushcli/hush/config/userfile"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/sandbox"
)

// InstructionsFile is the cross-agent file of project instructions.
const InstructionsFile = "AGENTS.md"

// MaxInstructionBytes bounds all AGENTS.md text in the system prompt
// together; what is over is cut with a note naming the file.
const MaxInstructionBytes = 32 << 10

// Instruction is one AGENTS.md file as the prompt carries it.
type Instruction struct {
	Path string
	Text string
	// Cut says how many bytes of the file were left out for the cap.
	Cut int
	// Refused says why the file was not read (it leads out of the
	// project, it is masked, it is not a regular file); the prompt does
	// not carry it and the banner says so.
	Refused string
}

// Masked is the session's mask check (sandbox.MaskSet.Masked): whether a
// path, symlinks resolved, is one no tool sees, and why.
type Masked func(path string) (reason string, masked bool)

// LoadInstructions reads AGENTS.md from configDir, then from the repository
// root (the nearest ancestor of dir holding .git; dir itself when there is
// none) down to dir, so the nearest file comes last and weighs most. All
// together they are capped at MaxInstructionBytes, the nearest files kept
// first. A missing file is skipped; an unreadable one is an error naming it.
//
// A project's files are read as a tool would see them, since a tool may
// have written them: only inside the project (a symlink out of the
// repository — to the vault, ~/.aws/credentials, a key — is refused),
// never a path masked says no tool sees (.env, hush's own files), and
// only a regular file, opened without blocking (a named pipe or a device
// is refused at once). A refused file is kept with its reason in Refused,
// so the session starts and says why. The user's own file in configDir is
// read below configDir, which no tool reaches, without the mask check
// (the config dir is masked itself). masked is required.
func LoadInstructions(dir, configDir string, masked Masked) ([]Instruction, error) {
	if masked == nil {
		return nil, errors.New("project instructions need the session's mask check")
	}
	type place struct {
		path, root string
		masked     Masked
	}
	var places []place
	if configDir != "" {
		places = append(places, place{filepath.Join(configDir, InstructionsFile), configDir, nil})
	}
	chain := []string{dir}
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			break
		}
		up := filepath.Dir(d)
		if up == d {
			chain = []string{dir} // no repository: the project dir alone
			break
		}
		d = up
		chain = append(chain, d)
	}
	repo := chain[len(chain)-1]
	for i := len(chain) - 1; i >= 0; i-- {
		places = append(places, place{filepath.Join(chain[i], InstructionsFile), repo, masked})
	}
	var out []Instruction
	seen := map[string]bool{}
	for _, p := range places {
		in, real, err := readInstruction(p.path, p.root, p.masked)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p.path, err)
		}
		if real != "" {
			if seen[real] {
				continue
			}
			seen[real] = true
		}
		out = append(out, in)
	}
	// The cap, spent nearest first.
	budget := MaxInstructionBytes
	for i := len(out) - 1; i >= 0; i-- {
		in := &out[i]
		if len(in.Text) > budget {
			keep := budget
			for keep > 0 && keep < len(in.Text) && in.Text[keep]&0xC0 == 0x80 {
				keep-- // not inside a UTF-8 sequence
			}
			in.Cut += len(in.Text) - keep
			in.Text = in.Text[:keep]
		}
		budget -= len(in.Text)
	}
	return out, nil
}

// readInstruction reads one AGENTS.md below root, at most the cap, and
// refuses what masked (nil: nothing) covers; a refusal is an Instruction
// with Refused set, and real is the file read, symlinks resolved.
func readInstruction(path, root string, masked Masked) (in Instruction, real string, err error) {
	in.Path = path
	f, real, err := userfile.OpenIn(root, path)
	if errors.Is(err, userfile.ErrOutside) || errors.Is(err, userfile.ErrNotRegular) {
		in.Refused = err.Error()
		return in, "", nil
	}
	if err != nil {
		return in, "", err
	}
	defer f.Close()
	for _, p := range []string{real, path} {
		if masked == nil {
			break
		}
		if reason, ok := masked(p); ok {
			in.Refused = fmt.Sprintf("it leads to %s, which is %s; no tool sees it, and neither does the prompt", p, reason)
			return in, real, nil
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxInstructionBytes+1))
	if err != nil {
		return in, real, err
	}
	in.Text = string(data)
	if fi, err := f.Stat(); err == nil && fi.Size() > int64(len(data)) {
		in.Cut = int(fi.Size()) - len(data)
	}
	return in, real, nil
}

// Git is the state of the project's repository.
type Git struct {
	Repo   bool
	Branch string // "" when detached or unknown
	Dirty  bool
	// Unknown says why Dirty could not be told (git missing, timed out).
	Unknown string
}

// GitState asks git about dir, through the spawn layer with the core
// environment (never hush's own), within a second, in sandbox — the host
// tools' — when it is set: git status runs what the repository's config
// names (core.fsmonitor, a clean filter), and that config is the
// project's, which any tool may have written.
func GitState(ctx context.Context, dir string, ambient map[string]string, sandbox *sandbox.Config) Git {
	var g Git
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			g.Repo = true
			break
		}
		if d == filepath.Dir(d) {
			return g
		}
	}
	env, _, err := tools.BuildEnv(tools.EnvRequest{Ambient: ambient, Policy: tools.Policy{Set: map[string]string{"GIT_OPTIONAL_LOCKS": "0"}}})
	if err != nil {
		g.Unknown = err.Error()
		return g
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	cmd, err := tools.Command(ctx, tools.Spec{Path: "git", Args: []string{"status", "--porcelain=v1", "--branch", "--untracked-files=normal"},
		Dir: dir, Env: env, Stdout: &out, Stderr: &errb, Sandbox: sandbox})
	if err == nil {
		err = cmd.Run()
	}
	if err != nil {
		g.Unknown = "git status failed"
		if ctx.Err() != nil {
			g.Unknown = "git status took over a second"
		}
		return g
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) > 0 && strings.HasPrefix(lines[0], "## ") {
		head := strings.TrimPrefix(lines[0], "## ")
		if b, _, ok := strings.Cut(head, "..."); ok {
			head = b
		}
		head = strings.TrimPrefix(head, "No commits yet on ")
		if !strings.HasPrefix(head, "HEAD (no branch)") {
			g.Branch = strings.Fields(head + " ")[0]
		}
		lines = lines[1:]
	}
	g.Dirty = len(lines) > 0 && lines[0] != ""
	return g
}

// PromptInput is what the system prompt is built from.
type PromptInput struct {
	Dir   string
	OS    string // runtime.GOOS
	Shell string // the user's $SHELL, from the start-up snapshot
	Now   time.Time
	Git   Git
	// Tools are the names of the tools offered, as registered.
	Tools []string
	// SecretNames are the names in the vault. Never values.
	SecretNames  []string
	Instructions []Instruction
}

// promptSecretNames is how many secret names the system prompt lists. A
// vault of 8,000 put some 140 KB of names into every model request (tens
// of thousands of tokens, past some models' whole context), and built it
// before the session's first byte.
const promptSecretNames = 200

// toolAdvice says when to prefer each of hush's tools; a tool not listed
// (an MCP tool) is described by its own schema.
var toolAdvice = []struct{ name, advice string }{
	{"read", "read a file (or a range of lines, numbered) — instead of cat, head or sed -n"},
	{"glob", "find files by name pattern, newest first — instead of find or ls -R"},
	{"grep", "search file contents by regular expression — instead of grep or rg in bash"},
	{"edit", "change part of a file by exact-text replacement; the user approves it by reading the diff — instead of sed or here-docs"},
	{"write", "create a file or replace it whole; also approved by its diff"},
	{"bash", "build, test, run programs, git, anything else; it starts with a minimal environment"},
	{"background", "start a long-running process (a dev server, a watcher) and read its output later"},
	{"dockerbash", "run a command in a container with the project mounted read-only at /app"},
	{"http", "one HTTP request to read documentation or an API; it has no vault, so ${NAME} is sent literally"},
}

// SystemPrompt is what the model is told at the start of every turn.
func SystemPrompt(in PromptInput) string {
	var b strings.Builder
	b.WriteString("You are hush, a coding agent. You work in the user's project by calling tools; be concise, and prefer doing to describing.\n\n")
	b.WriteString("# Environment\n")
	fmt.Fprintf(&b, "- Working directory (the project): %s\n", in.Dir)
	osLine := in.OS
	if in.Shell != "" {
		osLine += ", shell " + in.Shell + " (the bash tool runs bash)"
	}
	fmt.Fprintf(&b, "- OS: %s\n", osLine)
	fmt.Fprintf(&b, "- Date: %s\n", in.Now.Format("Monday, 2 January 2006"))
	switch {
	case !in.Git.Repo:
		b.WriteString("- Git: the directory is not in a git repository\n")
	default:
		state := "clean"
		if in.Git.Dirty {
			state = "uncommitted changes"
		}
		if in.Git.Unknown != "" {
			state = "state unknown: " + in.Git.Unknown
		}
		branch := in.Git.Branch
		if branch == "" {
			branch = "a detached HEAD"
		} else {
			branch = "branch " + branch
		}
		fmt.Fprintf(&b, "- Git: a repository, on %s, %s\n", branch, state)
	}

	b.WriteString("\n# Tools\n")
	have := map[string]bool{}
	for _, t := range in.Tools {
		have[t] = true
	}
	for _, a := range toolAdvice {
		if have[a.name] {
			fmt.Fprintf(&b, "- %s: %s\n", a.name, a.advice)
			delete(have, a.name)
		}
	}
	if len(have) > 0 {
		rest := make([]string, 0, len(have))
		for t := range have {
			rest = append(rest, t)
		}
		sort.Strings(rest)
		fmt.Fprintf(&b, "- also: %s (see each tool's description)\n", strings.Join(rest, ", "))
	}
	b.WriteString("Paths are relative to the working directory. Read a file before editing it.\n")

	b.WriteString("\n# Secrets\n")
	b.WriteString("Tools start with no credentials. When a command needs a secret, pass it as an env entry that references the vault, " +
		"like {\"GITHUB_TOKEN\": \"${GITHUB_TOKEN}\"}; the user is asked before it is read, and its value appears in output as [REDACTED:NAME]. " +
		"Never ask the user to paste a secret, and never write one into a file or a command line.\n")
	if len(in.SecretNames) == 0 {
		b.WriteString("The vault holds no secrets yet (the user adds them with `hush vault set NAME`).\n")
	} else {
		names := append([]string(nil), in.SecretNames...)
		sort.Strings(names)
		more := ""
		if len(names) > promptSecretNames {
			more = fmt.Sprintf(" and %d more not listed here (ask the user which to use)", len(names)-promptSecretNames)
			names = names[:promptSecretNames]
		}
		fmt.Fprintf(&b, "Secrets the user has, by name: %s%s.\n", strings.Join(names, ", "), more)
	}
	b.WriteString("Files hush keeps secrets in, credential stores and .env files are masked from every tool.\n")

	if len(in.Instructions) > 0 {
		b.WriteString("\n# Project instructions\n")
		b.WriteString("From AGENTS.md files; where they disagree, the later (nearer to the working directory) wins.\n")
		for _, ins := range in.Instructions {
			if ins.Refused != "" {
				continue
			}
			fmt.Fprintf(&b, "\n## %s\n\n%s", ins.Path, ins.Text)
			if !strings.HasSuffix(ins.Text, "\n") {
				b.WriteByte('\n')
			}
			if ins.Cut > 0 {
				fmt.Fprintf(&b, "[%d bytes of %s cut: the instructions are capped at %d KiB]\n", ins.Cut, ins.Path, MaxInstructionBytes>>10)
			}
		}
	}
	return b.String()
}

// Loaded says which AGENTS.md files a session carries, for the banner and
// /tools: "" when none.
func Loaded(ins []Instruction) string {
	if len(ins) == 0 {
		return ""
	}
	parts := make([]string, 0, len(ins))
	for _, in := range ins {
		p := in.Path
		if in.Refused != "" {
			p += " (not read: " + in.Refused + ")"
		}
		if in.Cut > 0 {
			p += fmt.Sprintf(" (%d bytes cut by the %d KiB size cap)", in.Cut, MaxInstructionBytes>>10)
		}
		parts = append(parts, p)
	}
	return "instructions: " + strings.Join(parts, ", ")
}

// PromptOptions is what Prompt gathers a system prompt from.
type PromptOptions struct {
	Dir       string // the project directory
	ConfigDir string // hush's config dir, for the user's own AGENTS.md
	// Ambient is hush's start-up environment snapshot (SHELL, PATH for git).
	Ambient     map[string]string
	OS          string
	Now         time.Time
	Tools       []string
	SecretNames []string
	// Sandbox is where git runs (GitState); nil: unsandboxed.
	Sandbox *sandbox.Config
	// Masked is the session's mask check, which the project's AGENTS.md
	// files pass as a tool's reads would (LoadInstructions). Required.
	Masked Masked
}

// Prompt reads the project's instructions and git state and builds the
// system prompt. An AGENTS.md that cannot be read is an error naming it;
// git trouble only makes the git line say so.
func Prompt(ctx context.Context, o PromptOptions) (string, []Instruction, error) {
	ins, err := LoadInstructions(o.Dir, o.ConfigDir, o.Masked)
	if err != nil {
		return "", nil, err
	}
	p := SystemPrompt(PromptInput{
		Dir: o.Dir, OS: o.OS, Shell: o.Ambient["SHELL"], Now: o.Now, Git: GitState(ctx, o.Dir, o.Ambient, o.Sandbox),
		Tools: o.Tools, SecretNames: o.SecretNames, Instructions: ins,
	})
	return p, ins, nil
}
