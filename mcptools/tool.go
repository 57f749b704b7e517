package mcptools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
)

// Prefix starts the name of every MCP tool the model sees.
const Prefix = "mcp__"

// maxToolName is the longest tool name every provider accepts (OpenAI and Anthropic allow 64).
const maxToolName = 64

// ToolName is the name the model sees for a server's tool: mcp__<server>__<tool>, with characters providers
// refuse replaced by '_' and over-long names shortened with a hash so that they stay unique.
func ToolName(server, tool string) string {
	return clipName(Prefix+sanitize(server)+"__"+sanitize(tool), "")
}

// IsMCPName reports whether a tool name is an MCP tool's.
func IsMCPName(name string) bool { return strings.HasPrefix(name, Prefix) }

// ServerOf returns the (sanitised) server part of an MCP tool name, or "".
func ServerOf(name string) string {
	if !IsMCPName(name) {
		return ""
	}
	rest := name[len(Prefix):]
	if i := strings.Index(rest, "__"); i >= 0 {
		return rest[:i]
	}
	return ""
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func clipName(name, suffix string) string {
	if len(name)+len(suffix) <= maxToolName {
		return name + suffix
	}
	sum := sha256.Sum256([]byte(name + suffix))
	h := "_" + hex.EncodeToString(sum[:4])
	return name[:maxToolName-len(h)-len(suffix)] + suffix + h
}

// Tool is an MCP server's tool as an agent.Tool. It is safe for concurrent use.
type Tool struct {
	server *Server
	remote string
	spec   llm.ToolSpec
	title  string
}

func newTool(s *Server, t *mcp.Tool, name string) *Tool {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = t.Title
	}
	if desc == "" {
		desc = "Tool " + t.Name + " of the MCP server " + s.name + "."
	}
	return &Tool{server: s, remote: t.Name, title: t.Title, spec: llm.ToolSpec{Name: name, Description: desc, Schema: schema}}
}

// Spec implements agent.Tool.
func (t *Tool) Spec() llm.ToolSpec { return t.spec }

// Server is the name of the server that provides the tool.
func (t *Tool) Server() string { return t.server.name }

// RemoteName is the tool's name on its server.
func (t *Tool) RemoteName() string { return t.remote }

// SubagentOnly reports whether the tool's server is reserved to subagents.
func (t *Tool) SubagentOnly() bool { return t.server.cfg.SubagentOnly }

// IsSearchSource reports whether the research graph may use the tool as a search source: named by its server's
// searchTools, or, when the server names none, a tool whose name contains "search".
func (t *Tool) IsSearchSource() bool {
	if len(t.server.cfg.SearchTools) == 0 {
		return strings.Contains(strings.ToLower(t.remote), "search")
	}
	for _, pat := range t.server.cfg.SearchTools {
		if ok, err := path.Match(pat, t.remote); err == nil && ok {
			return true
		}
	}
	return false
}

// Run implements agent.Tool. Every failure — bad arguments, a server error, a server that died — is an error
// result the model can read; the agent never stops because an MCP server misbehaved.
func (t *Tool) Run(ctx context.Context, args json.RawMessage) (agent.Result, error) {
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil {
		return agent.ErrorResult("invalid JSON arguments for %s: %v. Send a single JSON object matching the tool's schema.", t.spec.Name, err), nil
	}
	if obj == nil {
		// A model's "null" for a tool without parameters: the MCP spec wants an object, and strict servers say so.
		args = json.RawMessage("{}")
	}
	res, err := t.server.call(ctx, t.remote, args)
	if err != nil {
		var dead *DeadError
		if errors.As(err, &dead) {
			return agent.ErrorResult("%s: %v", t.spec.Name, err), nil
		}
		if ctx.Err() != nil {
			return agent.ErrorResult("%s: cancelled: %v", t.spec.Name, ctx.Err()), nil
		}
		return agent.ErrorResult("%s: %v", t.spec.Name, err), nil
	}
	text := Render(res)
	meta := map[string]string{"mcp_server": t.server.name, "mcp_tool": t.remote}
	if res != nil && res.IsError {
		return agent.Result{Content: "Error: " + t.spec.Name + ": " + text, IsError: true, Meta: meta}, nil
	}
	return agent.Result{Content: text, Meta: meta}, nil
}

// Render turns a tool result into text for the model. Binary content (images, audio, blobs) is described, not
// inlined: base64 would cost many tokens and tell a text model nothing.
func Render(res *mcp.CallToolResult) string {
	if res == nil {
		return "(the tool returned no content)"
	}
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			s := "[resource " + c.URI
			if c.Name != "" {
				s += " " + c.Name
			}
			if c.Description != "" {
				s += ": " + c.Description
			}
			parts = append(parts, s+"]")
		case *mcp.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			if c.Resource.Text != "" {
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", c.Resource.URI, c.Resource.Text))
			} else {
				parts = append(parts, fmt.Sprintf("[resource %s %s, %d bytes, not shown]", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob)))
			}
		default:
			if b, err := json.Marshal(c); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 {
		return "(the tool returned no content)"
	}
	return strings.Join(parts, "\n")
}
