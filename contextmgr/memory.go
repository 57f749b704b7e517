package contextmgr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/workspace"
)

// ProjectMemoryFile is the project memory file pinned into every context.
const ProjectMemoryFile = "AGENTS.md"

// maxProjectMemoryChars bounds what a huge AGENTS.md costs on every call.
const maxProjectMemoryChars = 40_000

// memoryToolNames maps the workspace file tools onto the persistent store's tool names.
var memoryToolNames = map[string]string{
	workspace.ToolLs:        ToolMemoryLs,
	workspace.ToolReadFile:  ToolMemoryRead,
	workspace.ToolWriteFile: ToolMemoryWrite,
	workspace.ToolEditFile:  ToolMemoryEdit,
	workspace.ToolGlob:      ToolMemoryGlob,
	workspace.ToolGrep:      ToolMemoryGrep,
}

// Names of the persistent memory store's tools.
const (
	ToolMemoryLs    = "memory_ls"
	ToolMemoryRead  = "memory_read"
	ToolMemoryWrite = "memory_write"
	ToolMemoryEdit  = "memory_edit"
	ToolMemoryGlob  = "memory_glob"
	ToolMemoryGrep  = "memory_grep"
)

// Tools returns the tools of the persistent memory store (memory_ls, memory_read, memory_write, memory_edit,
// memory_glob, memory_grep); nil when the store is off. Add them to the agent's tools.
func (m *Manager) Tools() []agent.Tool { return m.memoryTools() }

// MemoryDir is the persistent store's directory, "" when off.
func (m *Manager) MemoryDir() string {
	if m.mem == nil {
		return ""
	}
	return m.mem.Root()
}

func (m *Manager) memoryTools() []agent.Tool {
	if m.mem == nil {
		return nil
	}
	var out []agent.Tool
	for _, t := range m.mem.Tools() {
		s := t.Spec()
		name, ok := memoryToolNames[s.Name]
		if !ok {
			continue
		}
		s.Name = name
		s.Description = memoryDescription(s.Description)
		out = append(out, renamedTool{Tool: t, spec: s})
	}
	return out
}

// memoryDescription turns a workspace file tool's description into its memory store twin's. The tool's own words
// come first and name the memory store, so that the model (and one-line listings) can tell memory_read from
// read_file and the six memory tools from each other.
func memoryDescription(d string) string {
	d = strings.NewReplacer(
		"of the workspace", "of the persistent memory store",
		"workspace files", "memory store files",
		"a workspace file", "a memory store file",
		"the workspace", "the memory store",
	).Replace(d)
	return d + " The memory store survives across runs and sessions; paths are relative to it."
}

// renamedTool exposes a workspace file tool under another name; it still bounds its own output.
type renamedTool struct {
	agent.Tool
	spec llm.ToolSpec
}

func (r renamedTool) Spec() llm.ToolSpec    { return r.spec }
func (r renamedTool) BoundsOwnOutput() bool { return true }

// loadProjectMemory builds the pinned memory message: every distinct AGENTS.md of the workspace root and the
// project directories, and a note on the persistent store.
func (m *Manager) loadProjectMemory() (string, error) {
	dirs := append([]string{m.ws.Root()}, m.cfg.ProjectDirs...)
	var seen []string
	var b strings.Builder
	for _, d := range dirs {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		if slices.Contains(seen, abs) {
			continue
		}
		seen = append(seen, abs)
		data, err := os.ReadFile(filepath.Join(abs, ProjectMemoryFile))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("contextmgr: read project memory: %w", err)
		}
		text := strings.TrimSpace(string(data))
		if text == "" {
			continue
		}
		if clipped := lexical.Clip(text, maxProjectMemoryChars); clipped != text {
			text = clipped + fmt.Sprintf("\n[AGENTS.md clipped at %s characters; read the file for the rest]", lexical.Thousands(maxProjectMemoryChars))
		}
		fmt.Fprintf(&b, "# Project memory: %s\n\n%s\n\n", filepath.Join(abs, ProjectMemoryFile), text)
	}
	if m.mem != nil {
		b.WriteString("# Persistent memory\n\nThe memory_* tools (memory_ls, memory_read, memory_write, memory_edit, memory_glob, memory_grep) work on a store that survives across runs and sessions. Look there before starting; save durable facts, user preferences and lessons learned there, not in the run's workspace.")
		if entries, err := os.ReadDir(m.mem.Root()); err == nil && len(entries) > 0 {
			var names []string
			for _, e := range entries {
				n := e.Name()
				if e.IsDir() {
					n += "/"
				}
				names = append(names, n)
				if len(names) == 50 {
					names = append(names, "…")
					break
				}
			}
			b.WriteString(" It holds: " + strings.Join(names, ", ") + ".")
		}
		b.WriteString("\n")
	}
	return strings.TrimSpace(b.String()), nil
}

// ensurePinned keeps the project-memory message intact right after the system prompt: compaction never
// touches pinned messages, and this restores it if anything else removed or altered it.
func (m *Manager) ensurePinned(st *agent.State) {
	if m.pinned == "" {
		return
	}
	cv := m.convo(st.SessionID)
	cv.mu.Lock()
	defer cv.mu.Unlock()
	m.sync(cv, st)
	if cv.pinnedOK && cv.mems == 1 && cv.memAt < len(st.Messages) {
		if msg := &st.Messages[cv.memAt]; msg.Content == m.pinned && msg.Pinned && kindOf(*msg) == kindMemory {
			return // checked, and the history has only grown since
		}
	}
	cv.pinnedOK = true
	ok := 0
	for _, msg := range st.Messages {
		if kindOf(msg) == kindMemory {
			if msg.Content != m.pinned || !msg.Pinned {
				ok = -1
				break
			}
			ok++
		}
	}
	if ok == 1 {
		return
	}
	out := make([]llm.Message, 0, len(st.Messages)+1)
	for _, msg := range st.Messages {
		if kindOf(msg) != kindMemory {
			out = append(out, msg)
		}
	}
	at := 0
	for at < len(out) && out[at].Role == llm.RoleSystem && out[at].Pinned {
		at++
	}
	mem := llm.Message{Role: llm.RoleSystem, Content: m.pinned, Pinned: true, Meta: map[string]string{metaKind: kindMemory}}
	st.Messages = slices.Insert(out, at, mem)
}
