package mcp

import (
	"fmt"
	"strings"
)

// What `hush mcp list` and `hush mcp tools` need beyond a Manager: the
// configured servers' status and a known name. The commands, which
// print, are package main's (cmd_mcp_ops.go).

// Configured is each server's status without starting it (`hush mcp list
// --no-start`): not started, or disabled.
func Configured(servers []Server) []Status {
	var st []Status
	for _, s := range servers {
		state := NotStarted
		if s.Disabled {
			state = Disabled
		}
		st = append(st, Status{Name: s.Name, Source: s.Source, State: state, Command: commandLine(s)})
	}
	return st
}

// CheckKnown says, when no server of servers is called name, which are.
func CheckKnown(servers []Server, name string) error {
	var names []string
	for _, s := range servers {
		if s.Name == name {
			return nil
		}
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("no MCP server %q: none is configured", name)
	}
	return fmt.Errorf("no MCP server %q (configured: %s)", name, strings.Join(names, ", "))
}
