package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/lexical/bilingual"
)

func TestClean(t *testing.T) {
	for in, want := range map[string]struct {
		out     string
		grammar bool
	}{
		"(communications) channel":                     {"channel", false},
		"(question particle for \"yes-no\" questions)": {"", true},
		"classifier for houses, small buildings":       {"", true},
		"variant of 汞[gong3]":                          {"", false},
		"surname Bao":                                  {"", false},
		"CL:個|个[ge4]":                                  {"", false},
		"a lock (CL:把[ba3])":                           {"a lock", false},
		"(bound form) individual":                      {"", false},
		"to instruct sb to do sth":                     {"to instruct to do", false},
		"-ful":                                         {"", false},
		"  ":                                           {"", false},
	} {
		out, g := clean(in)
		if out != want.out || g != want.grammar {
			t.Errorf("clean(%q) = %q, %v; want %q, %v", in, out, g, want.out, want.grammar)
		}
	}
}

// The dictionary's own text format, through the generator, into the runtime's loader.
func TestGenerateFromText(t *testing.T) {
	text := cedictText("# CC-CEDICT\n# comment lines are skipped",
		"數據庫 数据库 [shu4 ju4 ku4] /database/",
		"嗎 吗 [ma5] /(question particle for \"yes-no\" questions)/",
		"通道 通道 [tong1 dao4] /(communications) channel/thoroughfare/passage/",
		"broken line without slashes")
	dir := t.TempDir()
	in, out := filepath.Join(dir, "cedict.u8"), filepath.Join(dir, "cedict.gz")
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	d := generate(t, in, "", out)
	if got, n := d.ToEnglish("數據庫吗"); got != "database" || n != 1 {
		t.Errorf("ToEnglish = %q (%d)", got, n)
	}
	if got, _ := d.ToEnglish("通道"); !strings.HasPrefix(got, "channel") {
		t.Errorf("通道 → %q", got)
	}
	// Too small a file is not the dictionary.
	if err := os.WriteFile(in, []byte("數據庫 数据库 [shu4 ju4 ku4] /database/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, "", out); err == nil {
		t.Error("a one-entry file was accepted")
	}
	if err := run(filepath.Join(dir, "missing"), "", out); err == nil {
		t.Error("a missing file was accepted")
	}
}

// cedictText is a file in the dictionary's own text format: lines, then as many filler entries as make the
// generator take it for the dictionary (it refuses a file too small to be one).
func cedictText(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	for i := 0; i < 1000; i++ {
		b.WriteString("甲 甲 [jia3] /first/\n")
	}
	return b.String()
}

// generate runs the generator on in (and the computing supplement comp, "" for none) into out and loads the
// result as the runtime does.
func generate(t *testing.T, in, comp, out string) *bilingual.Dict {
	t.Helper()
	if err := run(in, comp, out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	d, err := bilingual.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
