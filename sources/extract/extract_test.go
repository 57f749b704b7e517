package extract

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

func TestDecodeText(t *testing.T) {
	latin1, _ := charmap.Windows1252.NewEncoder().String("“Café”")
	ascii := strings.Repeat("plain ascii text ", 100) // longer than the 1024-byte sniff window
	tests := []struct {
		name, body, ctype, want string
	}{
		{"undeclared UTF-8 past the sniff window", ascii + "“quoted” café", "text/html", ascii + "“quoted” café"},
		{"header charset", latin1, "text/plain; charset=windows-1252", "“Café”"},
		{"meta charset wins over validity", `<meta charset="iso-8859-1">` + "caf\xc3\xa9", "text/html", `<meta charset="iso-8859-1">` + "cafÃ©"},
		{"BOM", "\xef\xbb\xbfhello", "text/plain", "hello"},
		{"undeclared invalid UTF-8 falls back to windows-1252", "caf\xe9", "text/plain", "café"},
	}
	for _, tt := range tests {
		if got := DecodeText([]byte(tt.body), tt.ctype); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestFirstHeading(t *testing.T) {
	for in, want := range map[string]string{
		"---\ntitle: \"Go, Backwards Compatibility, and GODEBUG\"\nlayout: article\n---\n\n# Intro\n": "Go, Backwards Compatibility, and GODEBUG",
		"text\n\n## Second level {#anchor}\n": "Second level",
		"no heading here\n":                   "",
	} {
		if got := FirstHeading(in); got != want {
			t.Errorf("FirstHeading(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWholeKeepsEverythingButFurniture(t *testing.T) {
	res, err := Whole(`<!--{ "Title": "The Go Memory Model" }--><style>p{}</style><h2>Introduction</h2><p>Body text.</p><script>evil()</script><nav>menu</nav>`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Title != "The Go Memory Model" {
		t.Errorf("title = %q", res.Title)
	}
	if !strings.Contains(res.Text, "## Introduction") || !strings.Contains(res.Text, "Body text.") {
		t.Errorf("text = %q", res.Text)
	}
	for _, bad := range []string{"evil", "menu", "p{}"} {
		if strings.Contains(res.Text, bad) {
			t.Errorf("kept %q: %q", bad, res.Text)
		}
	}
}

func TestPDFRejectsGarbage(t *testing.T) {
	for _, in := range []string{"", "%PDF-1.4 not really", "hello"} {
		if _, err := PDF(context.Background(), []byte(in)); err == nil {
			t.Errorf("PDF(%q): want error", in)
		}
	}
}
