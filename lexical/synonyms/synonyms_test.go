package synonyms

import (
	"bytes"
	"compress/gzip"
	"slices"
	"strings"
	"sync"
	"testing"
)

func gz(t testing.TB, text string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestEmbeddedThesaurus(t *testing.T) {
	th := Embedded()
	n, err := th.Len()
	if err != nil {
		t.Fatal(err)
	}
	if n < 80000 {
		t.Fatalf("%d words; WordNet has over 80,000 with a synonym", n)
	}
	for word, want := range map[string]string{
		"end":        "terminate", // verb sense 1: stop, finish, terminate, cease
		"outside":    "exterior",
		"exceed":     "surpass",
		"delete":     "erase",
		"quick":      "fast",
		"End":        "finish",    // looked up lower-cased
		"ends":       "terminate", // by its base form
		"terminates": "end",
		"boxes":      "package",
	} {
		got, err := th.Related(word, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(got, want) {
			t.Errorf("Related(%q, 3) = %q, want it to contain %q", word, got, want)
		}
	}
	// Rank limits: "end" is "destruction" only in its 6th noun sense.
	if got, _ := th.Related("end", 3); slices.Contains(got, "destruction") {
		t.Errorf("Related(end, 3) has a 6th-sense synonym: %q", got)
	}
	if got, _ := th.Related("end", 0); !slices.Contains(got, "destruction") {
		t.Errorf("Related(end, 0) lacks the 6th sense: %q", got)
	}
	// Multiword entries are kept up to three words, and none is longer.
	if got, _ := th.Related("remove", 0); !slices.Contains(got, "get rid of") {
		t.Errorf("Related(remove) = %q, want \"get rid of\"", got)
	}
	for w, senses := range th.words {
		if len(strings.Fields(w)) > 3 {
			t.Errorf("entry %q has more than three words", w)
		}
		for _, s := range senses {
			for _, o := range s.Words {
				if len(strings.Fields(o)) > 3 || o == w {
					t.Errorf("%q: synonym %q", w, o)
				}
			}
		}
	}
	if got, _ := th.Related("qwxzzy", 0); got != nil {
		t.Errorf("unknown word: %q", got)
	}
}

func TestConcurrentFirstUse(t *testing.T) {
	th := New(gz(t, "big\t1:large|great\t2:bad\nlarge\t1:big\n"))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := th.Related("big", 1)
			if err != nil || !slices.Equal(got, []string{"large", "great"}) {
				t.Errorf("Related(big, 1) = %q, %v", got, err)
			}
		}()
	}
	wg.Wait()
}

func TestMalformedTables(t *testing.T) {
	long := "w\t1:" + strings.Repeat("x", maxLine+10) + "\n"
	for name, table := range map[string][]byte{
		"not gzip":         []byte("big\t1:large\n"),
		"truncated gzip":   gz(t, "big\t1:large\n")[:15],
		"empty":            gz(t, ""),
		"no senses":        gz(t, "big\n"),
		"no rank":          gz(t, "big\tlarge\n"),
		"rank zero":        gz(t, "big\t0:large\n"),
		"rank too big":     gz(t, "big\t1001:large\n"),
		"rank with sign":   gz(t, "big\t+1:large\n"),
		"empty word":       gz(t, "big\t1:large||great\n"),
		"self synonym":     gz(t, "big\t1:big\n"),
		"upper case entry": gz(t, "Big\t1:large\n"),
		"empty entry":      gz(t, "\t1:large\n"),
		"duplicate entry":  gz(t, "big\t1:large\nbig\t2:great\n"),
		"not UTF-8":        gz(t, "big\t1:l\xffarge\n"),
		"line too long":    gz(t, long),
	} {
		th := New(table)
		if _, err := th.Senses("big"); err == nil {
			t.Errorf("%s: no error", name)
		}
		// The error is sticky and the table stays empty: a damaged table is never half used.
		if got, err := th.Related("big", 0); err == nil || got != nil {
			t.Errorf("%s: second use = %q, %v", name, got, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("big\t1:large|great\t2:bad\nlarge\t1:big\n"))
	f.Add([]byte("end up\t1:finish up|wind up\n"))
	f.Add([]byte("x\t999:y\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		words, err := parse(bytes.NewReader(data))
		if err != nil {
			if words != nil {
				t.Fatal("error with a table")
			}
			return
		}
		for w, senses := range words {
			if w == "" || len(senses) == 0 {
				t.Fatalf("entry %q with %d senses", w, len(senses))
			}
			for _, s := range senses {
				if s.Rank < 1 || s.Rank > maxRank || len(s.Words) == 0 || slices.Contains(s.Words, "") || slices.Contains(s.Words, w) {
					t.Fatalf("entry %q: sense %+v", w, s)
				}
			}
		}
	})
}
