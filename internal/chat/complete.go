package chat

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Commands are the slash commands, for /help and completion.
var Commands = []string{"/deep-research", "/compact", "/context", "/cost", "/clear", "/sessions", "/help", "/exit"}

// maxCompletions bounds the folder entries one completion reads.
const maxCompletions = 500

// completer completes the word before the cursor: a slash command at the start of the line, else a path (a word
// with a slash, or starting with . or ~) relative to root.
type completer struct {
	root string
	home string
}

// complete returns the candidates for the word that starts at start and ends at the cursor (each the whole word
// as it would read completed; a folder ends in /, a command in a space).
func (c completer) complete(before string) (cands []string, start int) {
	start = strings.LastIndexAny(before, " \t") + 1
	word := before[start:]
	if start == 0 && strings.HasPrefix(word, "/") && !strings.Contains(word[1:], "/") {
		for _, cmd := range Commands {
			if strings.HasPrefix(cmd, word) {
				cands = append(cands, cmd+" ")
			}
		}
		return cands, start
	}
	if !strings.Contains(word, "/") && !strings.HasPrefix(word, ".") && !strings.HasPrefix(word, "~") {
		return nil, start
	}
	return c.paths(word), start
}

func (c completer) paths(word string) []string {
	dirPart, base := "", word
	if i := strings.LastIndex(word, "/"); i >= 0 {
		dirPart, base = word[:i+1], word[i+1:]
	}
	dir := dirPart
	switch {
	case dir == "" && strings.HasPrefix(word, "~"):
		return nil // ~user is not completed
	case strings.HasPrefix(dir, "~/"):
		if c.home == "" {
			return nil
		}
		dir = filepath.Join(c.home, dir[2:])
	case dir == "":
		dir = "."
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(c.root, dir)
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	entries, _ := f.ReadDir(maxCompletions)
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		if strings.ContainsAny(name, " \t\r\n") || !printable(name) {
			continue // not something the line can hold as one word
		}
		full := dirPart + name
		if isDir(filepath.Join(dir, name), e) {
			full += "/"
		}
		out = append(out, full)
	}
	sort.Strings(out)
	return out
}

func isDir(path string, e os.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&os.ModeSymlink != 0 {
		st, err := os.Stat(path)
		return err == nil && st.IsDir()
	}
	return false
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

// commonPrefix is the longest prefix all of ss share, whole runes only.
func commonPrefix(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			r := []rune(p)
			p = string(r[:len(r)-1])
		}
	}
	return p
}
