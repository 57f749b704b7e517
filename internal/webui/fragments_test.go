package webui

import (
	"testing"

	"github.com/deepresearch/deepresearch/research/publish"
)

// TestLocateElidedQuote: a quote kept as fragments is highlighted from its first fragment to its last; one whose
// fragment is not in the text is not located.
func TestLocateElidedQuote(t *testing.T) {
	text := "The kiln heats its chamber with a black absorber plate.\nTwo roof fans push the warm air through the stack.\n"
	q := "The kiln heats its chamber" + publish.FragmentSeparator + "push the warm air"
	a, z, ok := locateQuote(text, q)
	if !ok || text[a:z] != "The kiln heats its chamber with a black absorber plate.\nTwo roof fans push the warm air" {
		t.Fatalf("located %v %q", ok, text[a:z])
	}
	if _, _, ok := locateQuote(text, "The kiln heats its chamber"+publish.FragmentSeparator+"costs nothing to run"); ok {
		t.Error("a quote with an invented fragment was located")
	}
}
