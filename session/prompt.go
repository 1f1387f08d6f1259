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
}

// LoadInstructions reads AGENTS.md from configDir, then from the repository
// root (the nearest ancestor of dir holding .git; dir itself when there is
// none) down to dir, so the nearest file comes last and weighs most. All
// together they are capped at MaxInstructionBytes, the nearest files kept
// first. A missing file is skipped; an unreadable one is an error naming it.
func LoadInstructions(dir, configDir string) ([]Instruction, error) {
	var paths []string
	if configDir != "" {
		paths = append(paths, filepath.Join(configDir, InstructionsFile))
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
	for i := len(chain) - 1; i >= 0; i-- {
		paths = append(paths, filepath.Join(chain[i], InstructionsFile))
	}
	var out []Instruction
	seen := map[string]bool{}
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		if seen[real] {
			continue
		}
		seen[real] = true
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		data, err := io.ReadAll(io.LimitReader(f, MaxInstructionBytes+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		in := Instruction{Path: p, Text: string(data)}
		if fi, err := os.Stat(p); err == nil && fi.Size() > int64(len(data)) {
			in.Cut = int(fi.Size()) - len(data)
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
		fmt.Fprintf(&b, "Secrets the user has, by name: %s.\n", strings.Join(names, ", "))
	}
	b.WriteString("Files hush keeps secrets in, credential stores and .env files are masked from every tool.\n")

	if len(in.Instructions) > 0 {
		b.WriteString("\n# Project instructions\n")
		b.WriteString("From AGENTS.md files; where they disagree, the later (nearer to the working directory) wins.\n")
		for _, ins := range in.Instructions {
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
}

// Prompt reads the project's instructions and git state and builds the
// system prompt. An AGENTS.md that cannot be read is an error naming it;
// git trouble only makes the git line say so.
func Prompt(ctx context.Context, o PromptOptions) (string, []Instruction, error) {
	ins, err := LoadInstructions(o.Dir, o.ConfigDir)
	if err != nil {
		return "", nil, err
	}
	p := SystemPrompt(PromptInput{
		Dir: o.Dir, OS: o.OS, Shell: o.Ambient["SHELL"], Now: o.Now, Git: GitState(ctx, o.Dir, o.Ambient, o.Sandbox),
		Tools: o.Tools, SecretNames: o.SecretNames, Instructions: ins,
	})
	return p, ins, nil
}
