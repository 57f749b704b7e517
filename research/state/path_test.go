package state

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Folder names with URI-special characters used to send the database elsewhere ("file:" + path + "?…" read
// '#' and '?' as the start of the fragment and the query), so two runs could share one database. Each folder
// must get its own state.db, exactly where it was asked for, and nothing anywhere else.
func TestOddFolderNames(t *testing.T) {
	base := t.TempDir()
	names := []string{"run#1", "run#2", "q?mode=memory", "q?x", "with space", "100%", "%41", "日本語 フォルダ", "semi;colon&amp=1", "tab\there"}
	for i, name := range names {
		dir := filepath.Join(base, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		db, err := Open(t.Context(), filepath.Join(dir, "state.db"))
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if err := db.SetMeta(t.Context(), "who", name); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if _, err := os.Stat(filepath.Join(dir, "state.db")); err != nil {
			t.Errorf("%q (#%d): no state.db in the folder: %v", name, i, err)
		}
	}
	// Reopen each read-only: every folder kept its own value.
	for _, name := range names {
		db, err := OpenReadOnly(t.Context(), filepath.Join(base, name, "state.db"))
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		v, ok, err := db.Meta(t.Context(), "who")
		db.Close()
		if err != nil || !ok || v != name {
			t.Errorf("%q: stored %q (%v, %v) — another run wrote here", name, v, ok, err)
		}
	}
	// Nothing was created next to the folders (such as a "run" database for "run#1").
	entries, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := slices.Clone(names)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("base folder holds %q, want only %q", got, want)
	}
}

// A relative path is resolved against the working folder, not read as a URI.
func TestRelativePath(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.Mkdir("a#b", 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := Open(t.Context(), filepath.Join("a#b", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := os.Stat(filepath.Join("a#b", "state.db")); err != nil {
		t.Fatal(err)
	}
}
