package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestSkeletonRunsOffline(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatal(err)
	}
	report := out.String()
	// Three evidence items: two from round one, one from the directed re-search the verifier asked for.
	for _, want := range []string{"# Why Go programs use channels", "[1]", "[3]", "https://go.dev/ref/mem#chan",
		"share memory by communicating"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "[4]") {
		t.Errorf("evidence duplicated:\n%s", report)
	}
}
