package workspace_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/workspace"
)

func newWS(t *testing.T, quota int64) *workspace.Workspace {
	t.Helper()
	ws, err := workspace.New(t.TempDir(), workspace.Config{Quota: quota})
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestResolveRefusesEscapes(t *testing.T) {
	ws := newWS(t, 0)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws.Root(), "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws.Root(), "sub"), filepath.Join(ws.Root(), "link-in")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "not-yet"), filepath.Join(ws.Root(), "dangle-out")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		ok   bool
	}{
		{"dangle-out", false},
		{"dangle-out/x.txt", false},
		{"notes.md", true},
		{"a/b/../c.txt", true},
		{"", true},
		{"../secret", false},
		{"a/../../secret", false},
		{"/etc/passwd", false},
		{filepath.Join(ws.Root(), "inside.txt"), true},
		{"link-out/file", false},
		{"link-out", false},
		{"link-in/new.txt", true},
		{"bad\x00name", false},
	}
	for _, tt := range tests {
		_, err := ws.Resolve(tt.path)
		if (err == nil) != tt.ok {
			t.Errorf("Resolve(%q) err = %v, want ok=%v", tt.path, err, tt.ok)
		}
		if !tt.ok && !errors.Is(err, workspace.ErrEscape) {
			t.Errorf("Resolve(%q) err = %v, want ErrEscape", tt.path, err)
		}
	}
}

func TestQuota(t *testing.T) {
	ws := newWS(t, 100)
	if err := ws.WriteFile("a.txt", make([]byte, 60)); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile("b.txt", make([]byte, 50)); !errors.Is(err, workspace.ErrQuota) {
		t.Fatalf("err = %v, want ErrQuota", err)
	}
	// Overwriting a file counts its new size, not both.
	if err := ws.WriteFile("a.txt", make([]byte, 90)); err != nil {
		t.Fatalf("overwrite within quota: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws.Root(), "b.txt")); !os.IsNotExist(err) {
		t.Error("a refused write must leave no file behind")
	}
}

func run(t *testing.T, ws *workspace.Workspace, name string, args any) agent.Result {
	t.Helper()
	for _, tool := range ws.Tools() {
		if tool.Spec().Name == name {
			b, _ := json.Marshal(args)
			res, err := tool.Run(t.Context(), b)
			if err != nil {
				t.Fatalf("%s: infrastructure error %v", name, err)
			}
			if b, ok := tool.(agent.BoundedOutput); !ok || !b.BoundsOwnOutput() {
				t.Errorf("%s must declare that it bounds its own output", name)
			}
			return res
		}
	}
	t.Fatalf("no tool %s", name)
	return agent.Result{}
}

func TestFileTools(t *testing.T) {
	ws := newWS(t, 0)
	if r := run(t, ws, "write_file", map[string]string{"path": "docs/a.md", "content": "one\ntwo\nthree\n"}); r.IsError {
		t.Fatal(r.Content)
	}
	if r := run(t, ws, "read_file", map[string]any{"path": "docs/a.md", "offset": 2, "limit": 1}); r.Content != "     2\ttwo\n(showing lines 2-2 of 3; read on with offset=3)\n" {
		t.Errorf("read_file = %q", r.Content)
	}
	if r := run(t, ws, "edit_file", map[string]string{"path": "docs/a.md", "old_string": "two", "new_string": "2"}); r.IsError {
		t.Fatal(r.Content)
	}
	run(t, ws, "write_file", map[string]string{"path": "docs/b.md", "content": "x x"})
	if r := run(t, ws, "edit_file", map[string]string{"path": "docs/b.md", "old_string": "x", "new_string": "y"}); !r.IsError || !strings.Contains(r.Content, "occurs 2 times") {
		t.Errorf("ambiguous edit = %+v", r)
	}
	if r := run(t, ws, "edit_file", map[string]string{"path": "docs/b.md", "old_string": "zzz", "new_string": "y"}); !r.IsError || !strings.Contains(r.Content, "not found") {
		t.Errorf("missing edit = %+v", r)
	}
	if r := run(t, ws, "glob", map[string]string{"pattern": "**/*.md"}); r.Content != "docs/a.md\ndocs/b.md\n" {
		t.Errorf("glob = %q", r.Content)
	}
	if r := run(t, ws, "grep", map[string]string{"pattern": "^2$"}); r.Content != "docs/a.md:2: 2\n" {
		t.Errorf("grep = %q", r.Content)
	}
	if r := run(t, ws, "ls", map[string]string{"path": "docs"}); !strings.Contains(r.Content, "a.md\t12 bytes") {
		t.Errorf("ls = %q", r.Content)
	}
	if r := run(t, ws, "read_file", map[string]string{"path": "../x"}); !r.IsError || !strings.Contains(r.Content, "escapes the workspace") {
		t.Errorf("escape = %+v", r)
	}
}

func TestReadFileClipsEnormousLines(t *testing.T) {
	ws := newWS(t, 0)
	huge := strings.Repeat("y", 500_000)
	if err := ws.WriteFile("big.txt", []byte("first\n"+huge+"\nlast\n")); err != nil {
		t.Fatal(err)
	}
	r := run(t, ws, "read_file", map[string]string{"path": "big.txt"})
	if len(r.Content) > workspace.MaxToolOutput {
		t.Fatalf("read_file returned %d characters, more than its bound", len(r.Content))
	}
	if !strings.Contains(r.Content, "[line clipped: 500000 characters; read the rest with offset=2 char_offset=2000]") || !strings.Contains(r.Content, "     3\tlast") {
		t.Errorf("clipped read = %q…", r.Content[:200])
	}
}

func TestFormatLinesPaging(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&b, "l%d\n", i)
	}
	tests := []struct {
		off, lim int
		want     string
	}{
		{0, 0, "     1\tl1\n     2\tl2\n     3\tl3\n     4\tl4\n     5\tl5\n"},
		{4, 10, "     4\tl4\n     5\tl5\n"},
		{9, 1, "(offset 9 is past the end: the file has 5 lines)"},
	}
	for _, tt := range tests {
		if got := workspace.FormatLines(b.String(), tt.off, tt.lim); got != tt.want {
			t.Errorf("FormatLines(off=%d, lim=%d) = %q, want %q", tt.off, tt.lim, got, tt.want)
		}
	}
}

// grep walks the tree itself, so it must not read through a symbolic link that Resolve would refuse.
func TestGrepDoesNotFollowLinksOut(t *testing.T) {
	ws := newWS(t, 0)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("TOPSECRET outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws.Root(), "leak.txt")); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile("notes/in.txt", []byte("TOPSECRET inside\n")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws.Root(), "notes", "in.txt"), filepath.Join(ws.Root(), "alias.txt")); err != nil {
		t.Fatal(err)
	}
	r := run(t, ws, "grep", map[string]string{"pattern": "TOPSECRET"})
	if strings.Contains(r.Content, "outside") {
		t.Errorf("grep read a file outside the workspace through a link:\n%s", r.Content)
	}
	if r.Content != "alias.txt:1: TOPSECRET inside\nnotes/in.txt:1: TOPSECRET inside\n" {
		t.Errorf("grep = %q, want both names of the file inside", r.Content)
	}
}

// A limit large enough to overflow offset+limit must still page forward, never report an empty page.
func TestFormatLinesHugeLimit(t *testing.T) {
	got := workspace.FormatLines("a\nb\nc\n", 2, math.MaxInt)
	if got != "     2\tb\n     3\tc\n" {
		t.Errorf("FormatLines(offset=2, limit=MaxInt) = %q", got)
	}
}

// The file tools stop when the run is cancelled instead of walking on after the caller gave up.
func TestGlobAndGrepHonourCancellation(t *testing.T) {
	ws := newWS(t, 0)
	if err := ws.WriteFile("a.txt", []byte("x\n")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, name := range []string{"glob", "grep"} {
		for _, tool := range ws.Tools() {
			if tool.Spec().Name != name {
				continue
			}
			args := `{"pattern":"*"}`
			if name == "grep" {
				args = `{"pattern":"x"}`
			}
			res, err := tool.Run(ctx, json.RawMessage(args))
			if err == nil && !res.IsError {
				t.Errorf("%s ran to completion on a cancelled context: %q", name, res.Content)
			}
		}
	}
}

// A workspace may be rooted at the filesystem root (a container's whole disk); its paths are then all inside.
func TestResolveAtFilesystemRoot(t *testing.T) {
	ws, err := workspace.New(string(filepath.Separator), workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	got, err := ws.Resolve(filepath.Join(dir, "x.txt"))
	if err != nil {
		t.Fatalf("Resolve inside / refused: %v", err)
	}
	if want, _ := filepath.EvalSymlinks(dir); got != filepath.Join(want, "x.txt") {
		t.Errorf("Resolve = %q, want %q", got, filepath.Join(want, "x.txt"))
	}
}

func TestReadFileCharOffsetPagesThroughOneEnormousLine(t *testing.T) {
	ws := newWS(t, 0)
	var b strings.Builder
	for i := range 50_000 {
		fmt.Fprintf(&b, "%d,", i)
	}
	huge := b.String()
	if err := ws.WriteFile("one-line.json", []byte("head\n"+huge+"\n")); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	next := map[string]any{"path": "one-line.json", "offset": 2, "char_offset": 2000}
	got.WriteString(huge[:2000])
	for range 100 {
		r := run(t, ws, "read_file", next)
		if r.IsError || len(r.Content) > workspace.MaxToolOutput {
			t.Fatalf("page: %d chars, %+v", len(r.Content), r.IsError)
		}
		body := strings.SplitN(r.Content, "\t", 3)[2]
		text, rest, _ := strings.Cut(body, "\n")
		got.WriteString(text)
		var line, off int
		if _, err := fmt.Sscanf(rest, "(read on with offset=%d char_offset=%d)", &line, &off); err != nil {
			break
		}
		next = map[string]any{"path": "one-line.json", "offset": line, "char_offset": off}
	}
	if got.String() != huge {
		t.Fatalf("paging reassembled %d of %d characters", got.Len(), len(huge))
	}
	if r := run(t, ws, "read_file", map[string]any{"path": "one-line.json", "offset": 2, "char_offset": len(huge) + 5}); !strings.Contains(r.Content, "past the end") {
		t.Errorf("past-the-end page = %q", r.Content)
	}
}
