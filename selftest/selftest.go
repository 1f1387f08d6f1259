// Package selftest is `hush audit`: it proves, on the user's own machine,
// that no secret leaks. It plants fresh canary secrets in a temporary vault,
// a project .env, the environment of a hush it starts, and an MCP server's
// config; drives every spawn path through the real executor with a replayed
// turn; and checks every place a secret could surface — the child's
// environment, readable files, the agent's /proc environ and memory, every
// process's command line, tool output, the transcript and the audit log.
//
// It never prints a canary's value, and it never touches the user's vault
// or data: everything it plants lives in a temporary directory it removes.
package selftest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
)

// Paths are the rows of the matrix.
const (
	PathBash       = "bash"
	PathBackground = "background"
	PathMCP        = "mcp"
	PathDocker     = "dockerbash"
)

// Vectors are the columns of the matrix.
const (
	VecEnv        = "env"
	VecFiles      = "files"
	VecEnviron    = "agent environ"
	VecMem        = "agent memory"
	VecCmdline    = "cmdlines"
	VecOutput     = "output"
	VecTranscript = "transcript"
	VecAuditLog   = "audit log"
	VecGranted    = "granted"
)

// Vectors lists the columns in display order.
var Vectors = []string{VecEnv, VecFiles, VecEnviron, VecMem, VecCmdline, VecOutput, VecTranscript, VecAuditLog, VecGranted}

// Cell is one check's outcome.
type Cell struct {
	// Status is "pass", "LEAK", "skip" or "n/a".
	Status string `json:"status"`
	// Detail says which canaries leaked, or why the check was skipped. It
	// names canaries by where they were planted, never by value.
	Detail string `json:"detail,omitempty"`
}

func pass() Cell                  { return Cell{Status: "pass"} }
func skip(why string) Cell        { return Cell{Status: "skip", Detail: why} }
func notApplicable(w string) Cell { return Cell{Status: "n/a", Detail: w} }
func leak(labels []string) Cell   { return Cell{Status: "LEAK", Detail: strings.Join(labels, ", ")} }

// canaries are the planted secrets, by where they were planted.
type canaries map[string]string

// Canary labels.
const (
	cVault      = "vault"
	cGranted    = "granted"
	cDotEnv     = "project .env"
	cEnvCred    = "environment (credential name)"
	cEnvURL     = "environment (URL password)"
	cEnvPlain   = "environment (innocent name)"
	cMCPLiteral = "mcp config"
)

func newCanaries() canaries {
	c := canaries{}
	for _, l := range []string{cVault, cGranted, cDotEnv, cEnvCred, cEnvURL, cEnvPlain, cMCPLiteral} {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		c[l] = canaryPrefix + strings.NewReplacer(" ", "", "(", "", ")", "", ".", "").Replace(l) + "-" + hex.EncodeToString(b)
	}
	return c
}

// find lists the labels of the canaries in text, except those in allowed.
func (c canaries) find(text string, allowed ...string) []string {
	var out []string
	for label, v := range c {
		if contains(allowed, label) {
			continue
		}
		if strings.Contains(text, v) {
			out = append(out, label)
		}
	}
	sort.Strings(out)
	return out
}

func (c canaries) check(text string, allowed ...string) Cell {
	if found := c.find(text, allowed...); len(found) > 0 {
		return leak(found)
	}
	return pass()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
