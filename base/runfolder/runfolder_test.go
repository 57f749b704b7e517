package runfolder

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test if fn does not return within a generous bound: a FIFO must never block an open.
func within(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s blocked", what)
		return nil
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
}

func TestFIFORefusedEverywhere(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "events.jsonl"))
	mkfifo(t, filepath.Join(dir, "state.db"))
	for _, tc := range []struct {
		name string
		fn   func() error
	}{
		{"Open", func() error { _, err := Open(dir, "events.jsonl"); return err }},
		{"ReadFile", func() error { _, err := ReadFile(dir, "events.jsonl", 0); return err }},
		{"Lines", func() error { return Lines(dir, "events.jsonl", func([]byte) error { return nil }) }},
		{"OpenAppend", func() error { _, err := OpenAppend(dir, "events.jsonl"); return err }},
		{"Check", func() error { return Check(dir, "state.db") }},
	} {
		err := within(t, tc.name, tc.fn)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a FIFO") {
			t.Errorf("%s on a FIFO: %v, want ErrNotRegular naming a FIFO", tc.name, err)
		}
	}
	// With a reader at the other end, an append opens; the type check still refuses it.
	r, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := OpenAppend(dir, "events.jsonl"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("append to a read FIFO: %v", err)
	}
}

func TestDeviceAndDirectoryRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(dir, "sub", 0); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a directory: %v", err)
	}
	// /dev/zero is outside the folder: the link is refused before the device is reached.
	if _, err := ReadFile(dir, "zero", 0); err == nil {
		t.Error("a link to /dev/zero was read")
	}
}

// outside makes a run folder and a folder beside it, with a file there the run folder must not reach.
func outside(t *testing.T) (run, out string) {
	t.Helper()
	base := t.TempDir()
	run, out = filepath.Join(base, "run"), filepath.Join(base, "outside")
	for _, d := range []string{run, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(out, "secret"), []byte("root:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return run, out
}

func TestLinksOutRefused(t *testing.T) {
	run, out := outside(t)
	if err := os.Symlink(filepath.Join(out, "secret"), filepath.Join(run, "events.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(run, "docs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside/secret", filepath.Join(run, "state.db")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(run, "events.jsonl", 0); err == nil {
		t.Error("read through a link out")
	}
	if _, err := ReadFile(run, "../outside/secret", 0); err == nil {
		t.Error("read through ..")
	}
	if _, err := ReadFile(run, filepath.Join(out, "secret"), 0); err == nil {
		t.Error("read an absolute name")
	}
	if _, err := OpenAppend(run, "events.jsonl"); err == nil {
		t.Error("appended through a link out")
	}
	if err := WriteFile(run, "docs/x.txt", []byte("leak")); err == nil {
		t.Error("wrote through a docs/ link out")
	}
	if err := MkdirAll(run, "docs"); err == nil {
		t.Error("MkdirAll accepted a docs/ link out")
	}
	if err := Check(run, "state.db"); err == nil {
		t.Error("Check accepted a link out")
	}
	if b, _ := os.ReadFile(filepath.Join(out, "secret")); string(b) != "root:x:0:0\n" {
		t.Errorf("the outside file changed: %q", b)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Errorf("files appeared outside: %v", ents)
	}
	// WriteFile at a name that is a link replaces the link, never writes through it.
	if err := WriteFile(run, "events.jsonl", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(run, "events.jsonl")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("events.jsonl after WriteFile: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "secret")); string(b) != "root:x:0:0\n" {
		t.Errorf("WriteFile wrote through the link: %q", b)
	}
}

func TestLinksInsideAllowed(t *testing.T) {
	run := t.TempDir()
	if err := MkdirAll(run, "docs/a"); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(run, "docs/a/t.txt", []byte("text")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("docs/a/t.txt", filepath.Join(run, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(run, "link.txt", 0); err != nil || string(b) != "text" {
		t.Fatalf("link inside: %q %v", b, err)
	}
	if err := Check(run, "link.txt"); err != nil {
		t.Fatalf("Check of a link inside: %v", err)
	}
	if err := Check(run, "missing.db"); err != nil {
		t.Fatalf("Check of a missing file: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Join(run, "docs/a"))
	if len(ents) != 1 {
		t.Fatalf("WriteFile left temporary files: %v", ents)
	}
}

func TestReadFileLimit(t *testing.T) {
	run := t.TempDir()
	if err := WriteFile(run, "big", bytes.Repeat([]byte("x"), 1000)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(run, "big", 999); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	if b, err := ReadFile(run, "big", 1000); err != nil || len(b) != 1000 {
		t.Fatalf("at the limit: %d %v", len(b), err)
	}
	if _, err := ReadFile(run, "nope", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}

func collect(t *testing.T, in string, maxLine int) []string {
	t.Helper()
	var got []string
	if err := eachLine(strings.NewReader(in), maxLine, func(b []byte) error {
		got = append(got, string(b))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestLines(t *testing.T) {
	long := strings.Repeat("y", 200)
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a\nb\n", []string{"a", "b"}},
		{"a\r\nb", []string{"a", "b"}},               // a torn last line is passed
		{"a\n" + long + "\nb\n", []string{"a", "b"}}, // an overlong line is skipped, the next one kept
		{long, nil},
		{"\n\n", []string{"", ""}},
	}
	for _, tt := range tests {
		if got := collect(t, tt.in, 100); strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("%.20q: %q, want %q", tt.in, got, tt.want)
		}
	}
	// A file far larger than the reader's buffer streams with one line at a time.
	run := t.TempDir()
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		b.WriteString(`{"seq":1,"message":"` + strings.Repeat("z", 50) + "\"}\n")
	}
	if err := WriteFile(run, "events.jsonl", []byte(b.String())); err != nil {
		t.Fatal(err)
	}
	n := 0
	stop := errors.New("stop")
	err := Lines(run, "events.jsonl", func([]byte) error {
		n++
		if n == 15000 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 15000 {
		t.Fatalf("Lines: %d lines, %v", n, err)
	}
}

func FuzzLines(f *testing.F) {
	f.Add("a\nbb\n", 2)
	f.Add("\r\n\r\nxxxxxxxx", 3)
	f.Fuzz(func(t *testing.T, in string, maxLine int) {
		if maxLine < 1 || maxLine > 1<<16 {
			return
		}
		got := collect(t, in, maxLine)
		// The same answer as splitting the string: lines without their newline, overlong ones left out.
		var want []string
		parts := strings.Split(in, "\n")
		if strings.HasSuffix(in, "\n") || in == "" {
			parts = parts[:len(parts)-1]
		}
		for _, p := range parts {
			if len(p)+1 > maxLine+1 {
				continue
			}
			want = append(want, strings.TrimSuffix(p, "\r"))
		}
		if len(got) != len(want) || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%q (max %d): %q, want %q", in, maxLine, got, want)
		}
	})
}
