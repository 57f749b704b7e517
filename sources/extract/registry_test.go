package extract_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/sources/corpus"
	"github.com/deepresearch/deepresearch/sources/extract"
	"github.com/deepresearch/deepresearch/sources/fetch"
)

// fakeFormat is a document format of one line of magic and words in reverse order: nothing reads it unless the
// registry holds it.
var fakeFormat = extract.Format{
	Name: "rev", Extensions: []string{".rev"}, MIME: []string{"application/x-reversed"}, Binary: true,
	Layout: extract.LayoutMarkdown,
	Sniff:  func(data []byte) bool { return bytes.HasPrefix(data, []byte("REV1\x00")) },
	Convert: func(_ context.Context, data []byte, _ extract.Limits) (extract.Document, error) {
		body, ok := bytes.CutPrefix(data, []byte("REV1\x00"))
		if !ok {
			return extract.Document{}, errors.New("rev: no magic")
		}
		words := strings.Fields(string(body))
		for i, j := 0, len(words)-1; i < j; i, j = i+1, j-1 {
			words[i], words[j] = words[j], words[i]
		}
		return extract.Document{Title: "Reversed", Text: strings.Join(words, " ") + "\n"}, nil
	},
}

const fakeDoc = "REV1\x00 night. at hunts aardwolf The"

// A format is one registry entry: added in one place, the corpus indexes files of it and the fetcher reads
// downloads of it, labelled or not; without the entry neither does.
func TestOneFormatEntryServesCorpusAndFetcher(t *testing.T) {
	reg := extract.Builtin().With(fakeFormat)

	// The corpus.
	docs := t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "notes.rev"), []byte(fakeDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := corpus.OpenWith(filepath.Join(t.TempDir(), "ix"), &corpus.Options{Formats: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	st, err := ix.Add(t.Context(), docs)
	if err != nil || st.Added != 1 {
		t.Fatalf("add: %+v %v", st, err)
	}
	rs, err := ix.Search(t.Context(), "aardwolf hunts", 5)
	if err != nil || len(rs) == 0 || !strings.HasSuffix(strings.Split(rs[0].URL, "#")[0], "notes.rev") {
		t.Fatalf("corpus search: %+v %v", rs, err)
	}
	doc, err := ix.Fetch(t.Context(), rs[0].URL)
	if err != nil || !strings.Contains(doc.Text, "The aardwolf hunts at night.") || doc.ContentType != "application/x-reversed" {
		t.Fatalf("corpus fetch: %+v %v", doc, err)
	}
	plain, err := corpus.OpenWith(filepath.Join(t.TempDir(), "ix2"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if st, err := plain.Add(t.Context(), docs); err != nil || st.Added != 0 {
		t.Errorf("the built-in registry indexed the fake format: %+v %v", st, err)
	}

	// The fetcher: by its label, by its bytes under a generic label, by the URL's extension with none.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/labelled":
			w.Header().Set("Content-Type", "application/x-reversed")
		case "/generic":
			w.Header().Set("Content-Type", "application/octet-stream")
		default:
			w.Header()["Content-Type"] = nil
		}
		w.Write([]byte(fakeDoc))
	}))
	defer srv.Close()
	f, err := fetch.New(&fetch.Config{AllowLoopback: true, Formats: reg})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/labelled", "/generic", "/unlabelled.rev"} {
		d, err := f.Fetch(t.Context(), srv.URL+p)
		if err != nil || d.Text != "The aardwolf hunts at night.\n" || d.Title != "Reversed" || d.ContentType != "application/x-reversed" {
			t.Errorf("fetch %s: %+v %v", p, d, err)
		}
	}
	builtin, err := fetch.New(&fetch.Config{AllowLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := builtin.Fetch(t.Context(), srv.URL+"/labelled"); err == nil {
		t.Error("the built-in registry read the fake format from the web")
	}
}

// The registry answers every way of asking, and Describe lists the formats.
func TestRegistryLookups(t *testing.T) {
	reg := extract.Builtin()
	for p, want := range map[string]string{"a/B.DOCX": "docx", "Makefile": "make", "x.ipynb": "notebook", "r.tar.md": "markdown", "README": "text"} {
		if f, ok := reg.ByPath(p); !ok || f.Name != want {
			t.Errorf("ByPath(%q) = %q %v, want %s", p, f.Name, ok, want)
		}
	}
	if _, ok := reg.ByPath("photo.jpeg"); ok {
		t.Error("a JPEG has a format")
	}
	if f, ok := reg.ByMIME("Application/PDF; qs=0.9"); !ok || f.Name != "pdf" {
		t.Errorf("ByMIME pdf: %q %v", f.Name, ok)
	}
	if f, ok := reg.ByMIME("application/xhtml+xml"); !ok || f.Name != "html" {
		t.Errorf("ByMIME xhtml: %q %v", f.Name, ok)
	}
	if _, ok := reg.BySniff([]byte("PK\x03\x04 not really a zip")); ok {
		t.Error("a broken zip sniffed as a format")
	}
	d := reg.Describe()
	for _, ext := range []string{".md", ".pdf", ".epub", ".docx", ".xlsx", ".ipynb", ".go", ".py"} {
		if !strings.Contains(d, ext) {
			t.Errorf("Describe lacks %s: %s", ext, d)
		}
	}
	if !strings.Contains(reg.With(fakeFormat).Describe(), ".rev") || strings.Contains(d, ".rev") {
		t.Error("Describe does not follow the registry")
	}
}

// Sniff is the one look at whether bytes are text.
func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want extract.Content
	}{
		{"ascii", []byte("hello\tworld\r\n"), extract.Text},
		{"utf-8", []byte("日本語のテキスト — café"), extract.Text},
		{"gbk", []byte("\xc4\xe3\xba\xc3\xca\xc0\xbd\xe7"), extract.Legacy},
		{"utf-16", []byte("\xff\xfeh\x00i\x00"), extract.UTF16},
		{"NUL", []byte("text\x00more"), extract.Binary},
		{"control soup", bytes.Repeat([]byte("\x01\x02\x03a"), 100), extract.Binary},
		{"empty", nil, extract.Text},
	} {
		if got := extract.Sniff(tc.in); got != tc.want {
			t.Errorf("%s: Sniff = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func FuzzRegistryRead(f *testing.F) {
	f.Add("x.docx", []byte("PK\x03\x04"))
	f.Add("x.ipynb", []byte(`{"nbformat":4,"cells":[{"cell_type":"code","source":"x"}]}`))
	f.Add("x.epub", []byte("PK\x03\x04\x14\x00\x00\x00\x00\x00mimetypeapplication/epub+zip"))
	f.Add("x.md", []byte("# T\n"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		reg := extract.Builtin()
		fm, ok := reg.BySniff(data)
		if !ok {
			fm, ok = reg.ByPath(name)
		}
		if !ok || fm.Name == "pdf" || fm.Name == "xlsx" {
			return
		}
		d, err := fm.Read(t.Context(), data, extract.Limits{Container: 1 << 20})
		if err == nil && len(d.Text) > extract.MaxTextSize+1 {
			t.Fatalf("%s: %d bytes of text", fm.Name, len(d.Text))
		}
	})
}
