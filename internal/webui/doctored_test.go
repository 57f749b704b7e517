package webui

import (
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/research"
)

// A run folder may come from someone else. A doctored state.db whose stored text paths point out of the folder
// (../../etc/passwd-style, absolute, through a link, at a FIFO), and report files swapped for links to the
// user's files, must never make the viewer serve what lies outside the folder, nor hang it.
func TestDoctoredRunFolder(t *testing.T) {
	eng := researchtest.New(t, 0)
	s := newTestServer(t, "", nil)
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "passwd")
	if err := os.WriteFile(secret, []byte("root:TOPSECRET:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(s.cfg.RunsDir, "doctored")
	if _, err := eng.Run(t.Context(), researchtest.Question, "doctored", dir, nil); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secretDir, filepath.Join(dir, "docs", "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "docs", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, research.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := s.Handler()
	get := func(p string) (int, string) {
		req := httptest.NewRequest("GET", p, nil)
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() { h.ServeHTTP(rec, req); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("GET %s hung", p)
		}
		b, _ := io.ReadAll(rec.Result().Body)
		return rec.Code, string(b)
	}
	if code, body := get("/runs/doctored/cite/1"); code != http.StatusOK || strings.Contains(body, "TOPSECRET") {
		t.Fatalf("the undoctored run: %d", code)
	}
	for _, path := range []string{rel, secret, "docs/link/passwd", "docs/fifo", "docs/../../" + filepath.Base(s.cfg.RunsDir) + "/../" + filepath.ToSlash(rel)} {
		if _, err := db.Exec(`UPDATE documents SET path = ?`, path); err != nil {
			t.Fatal(err)
		}
		code, body := get("/runs/doctored/cite/1")
		if strings.Contains(body, "TOPSECRET") {
			t.Errorf("document path %q: the viewer served a file outside the run folder", path)
		}
		if code != http.StatusOK {
			t.Errorf("document path %q: %d, want the citation page with the quote and the reason the text is missing", path, code)
		}
		if _, err := research.LoadSourceText(dir, "file:///anything"); err == nil {
			t.Errorf("document path %q: LoadSourceText read it", path)
		}
	}
	// Report files swapped for links to the user's files.
	for _, f := range []string{research.ReportMarkdownFile, research.ReportJSONFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(secret, filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
		if code, body := get("/runs/doctored/" + f); code == http.StatusOK || strings.Contains(body, "TOPSECRET") {
			t.Errorf("%s as a link out: %d %q", f, code, body)
		}
	}
	if _, err := research.LoadReport(dir); err == nil {
		t.Error("LoadReport followed report.json out of the run folder")
	}
}
