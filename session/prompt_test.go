package session

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hushcli/hush/tools/sandbox"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// noMasks is a mask check that covers nothing.
func noMasks(string) (string, bool) { return "", false }

// TestLoadInstructionsRefusesWhatNoToolSees plants at a project's
// AGENTS.md what a hostile tool (or a repository) would: a symlink to the
// vault file outside the project, one to the project's own .env (masked),
// a named pipe, a link to /dev/zero and to /dev/tty. Each is refused at
// once with a sentence, none of the canary reaches the instructions, and
// the session still starts; the control is a symlink to a file in the
// repository, which is read.
func TestLoadInstructionsRefusesWhatNoToolSees(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	data := filepath.Join(root, "data")
	repo := filepath.Join(root, "repo")
	write(t, filepath.Join(data, "vault.env"), "OPENAI_API_KEY=canary-vault-1\n")
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(repo, ".env"), "TOKEN=canary-dotenv-2\n")
	write(t, filepath.Join(repo, "docs", "agents.md"), "shared rules\n")
	masks, err := sandbox.NewMaskSet(sandbox.MaskOptions{DataDir: data, Project: repo})
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(repo, "svc")
	plant := func(what string) {
		t.Helper()
		p := filepath.Join(sub, "AGENTS.md")
		os.Remove(p)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if what == "fifo" {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := os.Symlink(what, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ plant, refused string }{
		{filepath.Join(data, "vault.env"), "it leads outside " + repo + " through a symlink; hush reads a project's files only inside the project"},
		{"../.env", "it leads to " + filepath.Join(repo, ".env") + ", which is " + sandbox.ReasonDotEnv + "; no tool sees it, and neither does the prompt"},
		{"fifo", "it is a named pipe (FIFO); hush reads only regular files"},
		{"/dev/zero", "it leads outside " + repo + " through a symlink; hush reads a project's files only inside the project"},
		{"/dev/tty", "it leads outside " + repo + " through a symlink; hush reads a project's files only inside the project"},
		{"../docs/agents.md", ""},
	} {
		plant(c.plant)
		done := make(chan struct{})
		var ins []Instruction
		var err error
		go func() { ins, err = LoadInstructions(sub, "", masks.Masked); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: LoadInstructions still blocked after 5 s", c.plant)
		}
		if err != nil {
			t.Errorf("%s: %v", c.plant, err)
			continue
		}
		if len(ins) != 1 {
			t.Errorf("%s: %d instructions, want the one in svc", c.plant, len(ins))
			continue
		}
		p := SystemPrompt(PromptInput{Dir: sub, Instructions: ins})
		if strings.Contains(p, "canary") || strings.Contains(Loaded(ins), "canary") {
			t.Errorf("%s: a canary reached the prompt or the banner:\n%s", c.plant, p)
		}
		if ins[0].Refused != c.refused {
			t.Errorf("%s: refused %q, want %q", c.plant, ins[0].Refused, c.refused)
		}
		if c.refused == "" {
			if !strings.Contains(p, "shared rules") {
				t.Errorf("%s: the control's text is not in the prompt:\n%s", c.plant, p)
			}
		} else if l := Loaded(ins); l != "instructions: "+filepath.Join(sub, "AGENTS.md")+" (not read: "+c.refused+")" {
			t.Errorf("%s: Loaded = %q", c.plant, l)
		}
	}
	if _, err := LoadInstructions(sub, "", nil); err == nil {
		t.Error("LoadInstructions without a mask check read the project")
	}
}

func TestLoadInstructionsOrderAndCap(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	proj := filepath.Join(repo, "svc", "api")
	cfg := filepath.Join(root, "config")
	write(t, filepath.Join(root, "AGENTS.md"), "above the repository: never read\n")
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(repo, "AGENTS.md"), "repo rules\n")
	write(t, filepath.Join(proj, "AGENTS.md"), "api rules\n")
	write(t, filepath.Join(cfg, "AGENTS.md"), "my own rules\n")
	ins, err := LoadInstructions(proj, cfg, noMasks)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range ins {
		got = append(got, in.Path+"="+strings.TrimSpace(in.Text))
	}
	want := []string{cfg + "/AGENTS.md=my own rules", repo + "/AGENTS.md=repo rules", proj + "/AGENTS.md=api rules"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("instructions:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if l := Loaded(ins); l != "instructions: "+cfg+"/AGENTS.md, "+repo+"/AGENTS.md, "+proj+"/AGENTS.md" {
		t.Errorf("Loaded = %q", l)
	}

	// Over the cap: the nearest file is kept whole, the farthest cut, and
	// the prompt says so.
	write(t, filepath.Join(repo, "AGENTS.md"), strings.Repeat("r", MaxInstructionBytes))
	ins, err = LoadInstructions(proj, cfg, noMasks)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, in := range ins {
		total += len(in.Text)
	}
	if total > MaxInstructionBytes {
		t.Errorf("instructions total %d bytes, over the cap", total)
	}
	if ins[2].Cut != 0 || ins[2].Text != "api rules\n" || ins[0].Cut != len("my own rules\n") || ins[1].Cut != len("api rules\n") {
		t.Errorf("cut: %+v", []int{ins[0].Cut, ins[1].Cut, ins[2].Cut})
	}
	p := SystemPrompt(PromptInput{Dir: proj, Instructions: ins})
	if !strings.Contains(p, "[10 bytes of "+repo+"/AGENTS.md cut: the instructions are capped at 32 KiB]") {
		t.Errorf("no cut note in the prompt:\n%s", p[len(p)-400:])
	}

	// No repository: the project directory's own file only.
	lone := filepath.Join(root, "lone")
	write(t, filepath.Join(lone, "AGENTS.md"), "lone\n")
	ins, err = LoadInstructions(lone, "", noMasks)
	if err != nil || len(ins) != 1 || ins[0].Path != filepath.Join(lone, "AGENTS.md") {
		t.Errorf("outside a repository: %+v %v", ins, err)
	}
	if Loaded(nil) != "" {
		t.Error("Loaded(nil) is not empty")
	}
}

func TestSystemPrompt(t *testing.T) {
	in := PromptInput{
		Dir: "/home/u/proj", OS: "linux", Shell: "/bin/zsh", Now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		Git:          Git{Repo: true, Branch: "main", Dirty: true},
		Tools:        []string{"bash", "edit", "grep", "http", "mcp_github_search", "read"},
		SecretNames:  []string{"OPENAI_API_KEY", "GITHUB_TOKEN"},
		Instructions: []Instruction{{Path: "/home/u/proj/AGENTS.md", Text: "Run make test."}},
	}
	p := SystemPrompt(in)
	for _, want := range []string{
		"- Working directory (the project): /home/u/proj\n",
		"- OS: linux, shell /bin/zsh (the bash tool runs bash)\n",
		"- Date: Tuesday, 1 December 2026\n",
		"- Git: a repository, on branch main, uncommitted changes\n",
		"- read: read a file", "- grep: search file contents", "- edit: change part of a file", "- http: one HTTP request",
		"- also: mcp_github_search (see each tool's description)\n",
		"Secrets the user has, by name: GITHUB_TOKEN, OPENAI_API_KEY.\n",
		"## /home/u/proj/AGENTS.md\n\nRun make test.\n",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	for _, absent := range []string{"- glob:", "- write:", "- dockerbash:"} {
		if strings.Contains(p, absent) {
			t.Errorf("prompt describes a tool not offered: %q", absent)
		}
	}
	// A large vault: the first 200 names, and how many more.
	in.SecretNames = nil
	for i := range 8000 {
		in.SecretNames = append(in.SecretNames, fmt.Sprintf("BULK_%04d", i))
	}
	p = SystemPrompt(in)
	if !strings.Contains(p, "by name: BULK_0000, BULK_0001, ") || !strings.Contains(p, ", BULK_0199 and 7800 more not listed here (ask the user which to use).\n") ||
		strings.Contains(p, "BULK_0200") {
		t.Errorf("8,000 names: %.300s", p[strings.Index(p, "Secrets the user has"):])
	}
	in.Git, in.SecretNames, in.Instructions = Git{}, nil, nil
	p = SystemPrompt(in)
	for _, want := range []string{"- Git: the directory is not in a git repository\n", "The vault holds no secrets yet"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(p, "# Project instructions") {
		t.Error("an instructions section without instructions")
	}
}

func TestGitState(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("needs search-tools: git is not installed") // scripts/provision installs it; CI has it
	}
	// Unsandboxed, and in a host tool's sandbox, where a session runs it.
	for _, sb := range []*sandbox.Config{nil, {}} {
		dir := t.TempDir()
		ambient := map[string]string{"PATH": filepath.Dir(git) + ":/usr/bin:/bin", "HOME": dir}
		if g := GitState(context.Background(), dir, ambient, sb); g.Repo {
			t.Errorf("a plain directory is a repository: %+v", g)
		}
		for _, args := range [][]string{{"init", "-q", "-b", "trunk"}, {"-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x"}} {
			cmd := exec.Command(git, args...)
			cmd.Dir = dir
			cmd.Env = []string{"HOME=" + dir, "PATH=" + ambient["PATH"]}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		if g := GitState(context.Background(), dir, ambient, sb); !g.Repo || g.Branch != "trunk" || g.Dirty || g.Unknown != "" {
			t.Errorf("clean repository (sandbox %v): %+v", sb != nil, g)
		}
		write(t, filepath.Join(dir, "new.txt"), "x")
		if g := GitState(context.Background(), dir, ambient, sb); !g.Dirty || g.Branch != "trunk" {
			t.Errorf("dirty repository (sandbox %v): %+v", sb != nil, g)
		}
	}
}
