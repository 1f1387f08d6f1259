package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/hushcli/hush/executor"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is one MCP server tool as the model sees it. Its gate id is
// tool.run:<Name()> (e.g. tool.run:mcp__github__create_issue, so a rule
// can allow a whole server with tool.run:mcp__github__*); the server's
// vault reads happen when it starts, as mcp:<server>.
type Tool struct {
	m      *Manager
	server string
	tool   string // the server's own name for it
	name   string
	title  string
	desc   string
	schema json.RawMessage
}

// maxToolName is the longest tool name OpenAI and Anthropic accept; both
// require ^[a-zA-Z0-9_-]{1,64}$.
const maxToolName = 64

// ToolName is the name the model sees for tool of server:
// "mcp__<server>__<tool>". A name that had to be changed to fit the
// providers' rule (characters outside [a-zA-Z0-9_-], or longer than 64)
// ends in a short hash of the original, so two tools never share a name.
func ToolName(server, tool string) string {
	name := "mcp__" + server + "__" + tool
	clean := sanitize(name)
	if clean == name && len(name) <= maxToolName {
		return name
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(clean) > maxToolName-len(suffix) {
		clean = clean[:maxToolName-len(suffix)]
	}
	return clean + suffix
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, s)
}

// maxDescription bounds a server-written description sent to the model.
const maxDescription = 1024

func (m *Manager) newTool(server string, t *sdk.Tool, used map[string]bool) *Tool {
	name := ToolName(server, t.Name)
	if used[name] {
		// "a__b"+"c" and "a"+"b__c" read the same; the hash tells them apart.
		sum := sha256.Sum256([]byte(server + "\x00" + t.Name))
		name = name[:min(len(name), maxToolName-9)] + "_" + hex.EncodeToString(sum[:4])
	}
	used[name] = true
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	desc := strings.TrimSpace(t.Description)
	if title != "" && !strings.Contains(desc, title) {
		desc = title + ". " + desc
	}
	desc = m.scrub(desc)
	if len(desc) > maxDescription {
		desc = desc[:maxDescription] + "…"
	}
	return &Tool{m: m, server: server, tool: t.Name, name: name, title: title,
		desc:   fmt.Sprintf("[MCP server %s, tool %s] %s", server, t.Name, desc),
		schema: m.schema(t.InputSchema)}
}

// schema returns a tool's input schema as an object schema, which is all
// the providers accept; a server that sends none gets an empty object.
func (m *Manager) schema(in any) json.RawMessage {
	obj := map[string]any{}
	if b, err := json.Marshal(in); err == nil {
		_ = json.Unmarshal(b, &obj)
	}
	if obj == nil {
		obj = map[string]any{}
	}
	obj["type"] = "object"
	if _, ok := obj["properties"]; !ok {
		obj["properties"] = map[string]any{}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return json.RawMessage(m.scrub(string(b)))
}

func (t *Tool) Name() string            { return t.name }
func (t *Tool) Description() string     { return t.desc }
func (t *Tool) Schema() json.RawMessage { return t.schema }

// Server is the server the tool belongs to; MCPName is its name there.
func (t *Tool) Server() string  { return t.server }
func (t *Tool) MCPName() string { return t.tool }

// Subject is the gate subject of the tool's server.
func (t *Tool) Subject() string { return Subject(t.server) }

// Run implements executor.Tool.
func (t *Tool) Run(ctx context.Context, tc *executor.ToolContext, raw json.RawMessage) (executor.Result, error) {
	var args map[string]any
	if err := executor.DecodeArgs(raw, &args); err != nil {
		return executor.Result{}, err
	}
	return t.m.Call(ctx, tc.Turn, t.server, t.tool, args, tc.Output)
}

// writeContent renders a tool result as text for the model. Binary content
// is described, not sent: the turn loop carries text.
func writeContent(w io.Writer, res *sdk.CallToolResult) {
	sep := ""
	for _, c := range res.Content {
		io.WriteString(w, sep)
		switch v := c.(type) {
		case *sdk.TextContent:
			io.WriteString(w, v.Text)
		case *sdk.ImageContent:
			fmt.Fprintf(w, "[image: %s, %d bytes]", v.MIMEType, len(v.Data))
		case *sdk.AudioContent:
			fmt.Fprintf(w, "[audio: %s, %d bytes]", v.MIMEType, len(v.Data))
		case *sdk.ResourceLink:
			fmt.Fprintf(w, "[resource link: %s %s]", v.URI, v.Name)
		case *sdk.EmbeddedResource:
			r := v.Resource
			switch {
			case r == nil:
				io.WriteString(w, "[empty resource]")
			case r.Text != "":
				fmt.Fprintf(w, "[resource %s]\n%s", r.URI, r.Text)
			default:
				fmt.Fprintf(w, "[resource %s: %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob))
			}
		default:
			fmt.Fprintf(w, "[%T content]", c)
		}
		sep = "\n"
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			w.Write(b)
		}
	}
}
