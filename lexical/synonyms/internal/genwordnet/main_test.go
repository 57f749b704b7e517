package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/lexical/synonyms"
)

// A WordNet-format dict in miniature: the licence lines, an adjective marker, a multiword lemma too long to keep,
// and a lemma whose two senses are listed most frequent first.
const (
	dataAdj = "  1 This software and database is being provided to you\n" +
		"00000001 00 a 03 fast 0 quick(a) 0 speedy 1 000 | acting or moving rapidly\n" +
		"00000099 00 s 02 fast 0 firm 0 000 | securely fixed\n" +
		"00000200 00 a 02 far 0 far_and_away_the_best 0 000 | much\n"
	indexAdj = "  1 This software and database is being provided to you\n" +
		"fast a 2 1 & 2 1 00000001 00000099\n" +
		"quick a 1 0 1 0 00000001\n" +
		"speedy a 1 0 1 0 00000001\n" +
		"firm a 1 0 1 0 00000099\n" +
		"far a 1 0 1 0 00000200\n"
)

func TestTable(t *testing.T) {
	synsets, err := parseData([]byte(dataAdj))
	if err != nil {
		t.Fatal(err)
	}
	if got := synsets["00000001"]; !slices.Equal(got, []string{"fast", "quick", "speedy"}) {
		t.Fatalf("synset 1 = %q", got)
	}
	table := map[string][]group{}
	if err := addIndex(table, []byte(indexAdj), synsets); err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	if err := write(&plain, table); err != nil {
		t.Fatal(err)
	}
	want := "fast\t1:quick|speedy\t2:firm\nfirm\t1:fast\nquick\t1:fast|speedy\nspeedy\t1:fast|quick\n"
	if plain.String() != want {
		t.Fatalf("table:\n%s\nwant:\n%s", plain.String(), want)
	}
	// The runtime reads what the generator writes.
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(plain.Bytes())
	zw.Close()
	th := synonyms.New(z.Bytes())
	if got, err := th.Related("fast", 1); err != nil || !slices.Equal(got, []string{"quick", "speedy"}) {
		t.Errorf("Related(fast, 1) = %q, %v", got, err)
	}
}

func TestMalformedInput(t *testing.T) {
	for name, data := range map[string]string{
		"short line":    "00000001 00 a\n",
		"bad count":     "00000001 00 a zz fast 0\n",
		"count too big": "00000001 00 a 05 fast 0 quick 0\n",
	} {
		if _, err := parseData([]byte(data)); err == nil {
			t.Errorf("data %s: no error", name)
		}
	}
	synsets, _ := parseData([]byte(dataAdj))
	for name, index := range map[string]string{
		"missing synset": "fast a 1 0 1 0 00000777\n",
		"bad counts":     "fast a 2 0 2 0 00000001\n",
	} {
		if err := addIndex(map[string][]group{}, []byte(index), synsets); err == nil {
			t.Errorf("index %s: no error", name)
		}
	}
	// A folder that is not WordNet's is refused, and no output is written.
	dir := t.TempDir()
	for _, p := range parts {
		os.WriteFile(filepath.Join(dir, "data."+p), []byte(dataAdj), 0o644)
		os.WriteFile(filepath.Join(dir, "index."+p), []byte(indexAdj), 0o644)
	}
	out := filepath.Join(dir, "out.gz")
	if err := run(dir, out); err == nil || !strings.Contains(err.Error(), "not a WordNet") {
		t.Errorf("run on a tiny dict: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output written for a refused dict")
	}
}
