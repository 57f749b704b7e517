package extractive

import (
	"strings"
	"testing"
)

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"A `String` is a wrapper over a `Vec<u8>`.", "A String is a wrapper over a Vec<u8>."},
		{"Use `RefCell<T>` and **not** <b>this</b>.", "Use RefCell<T> and not this."},
		{"Call `f(*args)` or ``a ` b`` with `x ** y`.", "Call f(*args) or a ` b with x ** y."},
		{"- [`Vec<T>`](vec.html \"Vec\") grows.", "Vec<T> grows."},
		{"An unclosed ` tick and *emphasis*.", "An unclosed tick and emphasis."},
		{"| a | `b|c` |", "a | b | c"},
		{`map\[any]any &amp; more`, "map[any]any & more"},
		// Code that would read as citations keeps its code marks.
		{"`list((1, 2, 3))` yields `[1, 2, 3]`.", "list((1, 2, 3)) yields `[1, 2, 3]`."},
	}
	for _, tt := range tests {
		if got := plainText(tt.in); got != tt.want {
			t.Errorf("plainText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// English questions split into key phrases: a serial list ("INSERT, UPDATE and DELETE") is one group of conjuncts,
// as "A and B" is, while a comma that ends an opening phrase ("In Go, what …") joins nothing; "kind" and "sort" end
// a phrase only as the head of "… of", so "sorts" can be what is asked about.
func TestSplitEnglishPhrases(t *testing.T) {
	for _, tc := range []struct{ q, want string }{
		{"What is the RETURNING clause of INSERT, UPDATE and DELETE for?", "RETURNING clause | INSERT | +UPDATE | +DELETE"},
		{"How do lists, tuples and dicts differ?", "lists | +tuples | +dicts"},
		{"In Go, what is a channel and a mutex?", "Go | channel | +mutex"},
		{"What are lists, and how do they differ from tuples and sets?", "lists | tuples | +sets"},
		{"Are sorts in Python stable?", "sorts | Python stable"},
		{"What kind of lock should I use?", "lock"},
		{"What sorts of values can a map key hold?", "values | map key hold"},
		// "rather than" compares as "or" does; a possessive pronoun is no phrase.
		{"When should I use cidr rather than inet for network addresses?", "cidr | +inet | network addresses"},
		{"Will it compile if a dependency uses an older edition than mine?", "compile | dependency | older edition"},
		// A placeholder name stands for the asker's own: only the rest of a path is searched for.
		{"Should my module live in src/foo/mod.rs or in src/foo.rs?", "module live | src mod rs | +src rs"},
		{"Why does foo.bar() fail in a goroutine?", "fail | goroutine"},
		{"How do I draw a progress bar in the terminal?", "draw | progress bar | terminal"},
		// A subordinator opens a clause of its own: "as" and "if" are no part of the phrases around them.
		{"Should I write my tool as a bash script, if I might add a GUI later?", "write | tool | bash script | add | GUI later"},
		// A gerund before a name is the name's verb; before a common noun it may be the noun's modifier.
		{"Does running pg_dump on a live database stop other sessions?", "pg_dump | live database stop other sessions"},
		{"What does the logging module do?", "logging module"},
		// The judgement of an anticipatory "it" and the verb of its clause are no phrases: the clause's object is.
		{"Is it a good idea to rely on a feature marked Experimental in production?", "feature marked Experimental | production"},
		{"Would it be safe for two goroutines to write one map?", "two goroutines | write one map"},
		// A negative auxiliary, spelled either way, is no phrase, nor is "let me" before the action asked about.
		{"Why won't Rust let me implement Display for Vec?", "Rust | implement Display | Vec"},
		{"Why doesn’t the compiler let us borrow it twice?", "compiler | borrow | twice"},
		// A name written as a call is code, a phrase of its own; a parenthesis after a space is an aside.
		{"Why do rows inserted with now() over ten minutes get one timestamp?", "rows inserted | now() | ten minutes get one timestamp"},
		{"Can an index on lower(email) be unique?", "index | lower() | email | unique"},
		{"Is the log (the one on disk) flushed?", "log | one | disk | flushed"},
		// …and while, because and although end a phrase.
		{"Why does the build stop while the tests pass because of a lock?", "build stop | tests pass | lock"},
	} {
		ph, _ := splitPhrases(tc.q)
		var got []string
		for _, p := range ph {
			if p.Conj {
				got = append(got, "+"+p.Text)
			} else {
				got = append(got, p.Text)
			}
		}
		if g := strings.Join(got, " | "); g != tc.want {
			t.Errorf("splitPhrases(%q) = %q, want %q", tc.q, g, tc.want)
		}
	}
}
