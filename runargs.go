package main

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
)

// flagLike is a word written as a flag: -x, --name, --name=value.
var flagLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^--?[A-Za-z][A-Za-z0-9-]*(=.*)?$`) })

// promptFlagError reports a word after hush run's prompt that is written
// as a flag. urfave/cli stops reading flags at the first argument, so
// `hush run hi --modle x` would have sent "hi --modle x" as the prompt: a
// known flag there is said to belong before the prompt, any other gets the
// one line a mistyped flag gets before it. The words after a `--` are the
// prompt's, whatever they look like: hush run -- "-v prints nothing".
func promptFlagError(c *cli.Context) error {
	args := c.Args().Slice()
	for _, arg := range args[:len(args)-afterDashDash(c)] {
		if !flagLike().MatchString(arg) {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if hasFlag(c.Command.Flags, name) {
			return &exitError{exitUsage, fmt.Errorf("flag %s comes after the prompt; put flags first: hush run %s \"...\"", arg, arg)}
		}
		// The error the flag package gives for one before the prompt.
		return usageError(c, fmt.Errorf("flag provided but not defined: -%s", name), false)
	}
	return nil
}

// afterDashDash is how many of c's arguments followed a `--` that ended
// its flags (the flag package drops the `--`; the parent command's
// arguments, read up to the command's name, still hold it).
func afterDashDash(c *cli.Context) int {
	lineage := c.Lineage()
	if len(lineage) < 2 {
		return 0
	}
	raw := lineage[1].Args().Slice()
	for i, a := range raw {
		if a == "--" {
			return min(len(raw)-i-1, c.Args().Len())
		}
	}
	return 0
}
