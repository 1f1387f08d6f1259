package main

import (
	"path/filepath"

	"github.com/urfave/cli/v2"
)

// newRootCmd is hush itself: the commands, and chat when none is named.
func newRootCmd(a *app, runF func(*chatOptions) error) *cli.App {
	if runF == nil {
		runF = runChat
	}
	return &cli.App{
		Name:    "hush",
		Usage:   "a coding agent that hands a tool a secret only when it was granted that secret",
		Version: version,
		Description: "hush chats with a model that calls tools (a host shell, background processes,\n" +
			"MCP servers, a shell in a container). Tools start with a clean environment:\n" +
			"a secret reaches a tool only through a ${NAME} reference the permission gate allowed.\n\n" +
			"Files: config.toml and mcp.json in the config dir ($HUSH_CONFIG_DIR, else\n" +
			"$XDG_CONFIG_HOME/hush); vault.env and audit.jsonl in the data dir ($HUSH_DATA_DIR,\n" +
			"else $XDG_DATA_HOME/hush).",
		Reader:    a.Stdin,
		Writer:    a.Stdout,
		ErrWriter: a.Stderr,
		// The root command is chat: its flags work without the word chat
		// (hush --model x), as other agents' do.
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "project directory (default: the current directory)"},
		}, append(modelFlagList(), chatFlags()...)...),
		Action:       func(c *cli.Context) error { return chatAction(c, a, runF, true) },
		OnUsageError: usageError,
		Before: func(c *cli.Context) error {
			if d := c.String("dir"); d != "" {
				abs, err := filepath.Abs(d)
				if err != nil {
					return err
				}
				a.WorkDir = abs
			}
			return nil
		},
		Commands: []*cli.Command{
			newChatCmd(a, nil),
			newRunCmd(a, nil),
			newEnvCmd(a, nil),
			newSetupCmd(a, nil),
			newVaultCmd(a),
			newTrustCmd(a, nil),
			newRulesCmd(a),
			newAuditCmd(a, nil),
			newProbeCmd(a),
			newConnectCmd(a),
			newMCPCmd(a),
			newSandboxCmd(a),
			newSessionsCmd(a),
			helpCommand(),
		},
		ExitErrHandler: func(*cli.Context, error) {}, // main() reports errors, once
	}
}
