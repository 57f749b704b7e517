package lexical

import "testing"

// The verb test: noun phrases are fragments, imperatives are sentences.
func TestHasVerb(t *testing.T) {
	for s, want := range map[string]bool{
		"To access the actual hardware register use the true R name.":          true,
		"Give an error if unable to represent an integer constant precisely.":  true,
		"The closing of a channel is synchronized before a receive.":           true,
		"SP: Stack pointer: the highest address within the local stack frame.": false,
		"Its kind and location.":  false,
		"A pointer to the frame.": false,
		"Stack pointer, the highest address within the local stack frame.":       false,
		"互斥锁的零值是未加锁的互斥锁。":                                                        true,
		"Move primary cache to victim cache.":                                    true,
		"See package [sync.Mutex] documentation.":                                true,
		"Stack pointer to the frame.":                                            false,
		"For the hardware register, use R13.":                                    true,
		"Rust logo Rust 1.63.0":                                                  false,
		"`children map[canceler]struct{}`: set to nil by the first cancel call.": true,
		"`children map[canceler]struct{}`: nil.":                                 false,
		// A parenthetical aside's verbs are not the sentence's.
		"This program (as above, but with the send and receive statements swapped and using an unbuffered channel).": false,
		"A pointer (which is stored in the frame).":                                        false,
		"(This is the default.)":                                                           true,
		"The function f(x) returns a value (see below).":                                   true,
		"Calling close() (which is safe twice) releases the lock.":                         true,
		"The value (the default is nil) of the field (see (b) below) is the key of a map.": true,
	} {
		if got := HasVerb(WithoutAsides(s)); got != want {
			t.Errorf("HasVerb(WithoutAsides(%q)) = %v, want %v", s, got, want)
		}
	}
}

func TestPreposition(t *testing.T) {
	tests := []struct {
		prev, w string
		want    bool
	}{
		{"inheritance", "like", true},
		{"numbers", "like", true},
		{"languages,", "like", true},
		{"values", "unlike", true},
		{"structs", "(unlike", true},
		{"you", "like", false},
		{"would", "like", false},
		{"I", "Like", false},
		{"to", "like", false},
		{"inheritance", "likes", false},
		{"inheritance", "likely", false},
		{"the", "of", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := Preposition(tt.prev, tt.w); got != tt.want {
			t.Errorf("Preposition(%q, %q) = %v, want %v", tt.prev, tt.w, got, tt.want)
		}
	}
}
