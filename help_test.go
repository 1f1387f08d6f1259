package main

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHelpOfEveryCommand: for every command and subcommand, `hush help
// WORDS…` prints exactly what `hush WORDS… --help` prints, the help lists
// each subcommand and each option, and every option has an explanation.
func TestHelpOfEveryCommand(t *testing.T) {
	t.Parallel()
	var paths [][]string
	var walk func(prefix []string, cmds []*cli.Command)
	walk = func(prefix []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden || c.Name == "help" {
				continue
			}
			p := append(append([]string(nil), prefix...), c.Name)
			paths = append(paths, p)
			walk(p, c.Subcommands)
		}
	}
	walk(nil, newApp(newTestApp(t, "").app).Commands)
	if len(paths) < 20 {
		t.Fatalf("only %d commands found", len(paths))
	}
	for _, p := range paths {
		viaHelp := newTestApp(t, "")
		code := runMain(viaHelp.app, append([]string{"hush", "help"}, p...))
		viaFlag := newTestApp(t, "")
		code2 := runMain(viaFlag.app, append(append([]string{"hush"}, p...), "--help"))
		name := strings.Join(p, " ")
		if code != 0 || code2 != 0 {
			t.Errorf("hush help %s: exit %d; hush %s --help: exit %d\n%s%s", name, code, name, code2, viaHelp.errOut, viaFlag.errOut)
			continue
		}
		if viaHelp.out.String() != viaFlag.out.String() {
			t.Errorf("hush help %s differs from hush %s --help:\n%s\n----\n%s", name, name, viaHelp.out, viaFlag.out)
		}
		help := viaHelp.out.String()
		cmd := findCommand(newApp(viaHelp.app).Commands, p)
		for _, sub := range cmd.Subcommands {
			if !sub.Hidden && !strings.Contains(help, "   "+sub.Name+" ") {
				t.Errorf("hush help %s does not list %s:\n%s", name, sub.Name, help)
			}
		}
		for _, f := range cmd.Flags {
			if !strings.Contains(help, "--"+f.Names()[0]) {
				t.Errorf("hush help %s does not list --%s:\n%s", name, f.Names()[0], help)
			}
			if d, ok := f.(cli.DocGenerationFlag); !ok || strings.TrimSpace(d.GetUsage()) == "" {
				t.Errorf("hush %s --%s has no explanation", name, f.Names()[0])
			}
		}
	}
}

func findCommand(cmds []*cli.Command, path []string) *cli.Command {
	for _, c := range cmds {
		if c.Name == path[0] {
			if len(path) == 1 {
				return c
			}
			return findCommand(c.Subcommands, path[1:])
		}
	}
	return nil
}

// TestNearFlag: a typo names the flag meant; a word near none names none.
func TestNearFlag(t *testing.T) {
	t.Parallel()
	flags := []cli.Flag{&cli.StringFlag{Name: "model"}, &cli.BoolFlag{Name: "json"}, &cli.BoolFlag{Name: "continue", Aliases: []string{"c"}},
		&cli.BoolFlag{Name: "no-docker"}, &cli.BoolFlag{Name: "fork"}}
	for typed, want := range map[string]string{"modle": "--model", "jsn": "--json", "cont": "--continue", "no-dcoker": "--no-docker",
		"frob": "", "x": "", "c": "", "zzzzzz": "", "mode": "--model", "jason": "--json"} {
		if got := nearFlag(flags, typed); got != want {
			t.Errorf("nearFlag(%q) = %q, want %q", typed, got, want)
		}
	}
}
