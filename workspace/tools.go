package workspace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/agent"
)

// Output bounds of the file tools. They bound their own output, so generic eviction leaves them alone; a single
// enormous line is clipped here, which is what prevents an evict → read → evict loop.
const (
	DefaultReadLimit = 2000    // lines per read_file call
	MaxLineChars     = 2000    // characters shown of one line
	MaxToolOutput    = 60_000  // characters of any file tool's answer
	maxMatches       = 200     // grep and glob results
	maxGrepFileBytes = 8 << 20 // files larger than this are not grepped
)

// Names of the file tools; context management and the memory store refer to them by these constants.
const (
	ToolLs        = "ls"
	ToolReadFile  = "read_file"
	ToolWriteFile = "write_file"
	ToolEditFile  = "edit_file"
	ToolGlob      = "glob"
	ToolGrep      = "grep"
)

// Tools returns the file tools over this workspace: ls, read_file, write_file, edit_file, glob and grep.
func (w *Workspace) Tools() []agent.Tool {
	return []agent.Tool{
		agent.NewTool(ToolLs, "List a directory of the workspace (default: its root) with file sizes.", w.ls).Bounded(),
		agent.NewTool(ToolReadFile, "Read a text file of the workspace. Lines are numbered from 1; use offset (first line, 1-based) and limit (number of lines) to page through large files. Lines longer than 2000 characters are clipped; page through such a line with char_offset.", w.readFile).Bounded(),
		agent.NewTool(ToolWriteFile, "Create or overwrite a file of the workspace with the given content.", w.writeFile).Bounded(),
		agent.NewTool(ToolEditFile, "Replace an exact string in a workspace file. old_string must occur exactly once unless replace_all is true.", w.editFile).Bounded(),
		agent.NewTool(ToolGlob, "Find workspace files whose path matches a glob pattern (supports * ? and ** for any depth), e.g. **/*.md.", w.glob).Bounded(),
		agent.NewTool(ToolGrep, "Search workspace files for a regular expression; prints path:line: text for each match.", w.grep).Bounded(),
	}
}

// LsInput is the input of ls.
type LsInput struct {
	Path string `json:"path,omitempty" jsonschema:"directory relative to the workspace root; empty for the root"`
}

func (w *Workspace) ls(_ context.Context, in LsInput) (string, error) {
	abs, err := w.Resolve(in.Path)
	if err != nil {
		return "", err
	}
	entries, err := fs.ReadDir(w.fs.FS(), filepath.ToSlash(w.rel(abs)))
	if err != nil {
		return "", fmt.Errorf("ls %s: %w", displayPath(in.Path), err)
	}
	var b strings.Builder
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			fmt.Fprintf(&b, "%s/\n", name)
			continue
		}
		size := int64(0)
		if fi, err := e.Info(); err == nil {
			size = fi.Size()
		}
		fmt.Fprintf(&b, "%s\t%d bytes\n", name, size)
		if b.Len() > MaxToolOutput {
			b.WriteString("... (listing truncated)\n")
			break
		}
	}
	if b.Len() == 0 {
		return fmt.Sprintf("%s is empty", displayPath(in.Path)), nil
	}
	return b.String(), nil
}

// ReadInput is the input of read_file.
type ReadInput struct {
	Path   string `json:"path" jsonschema:"file path relative to the workspace root"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to show, 1-based; default 1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"number of lines to show; default 2000"`
	// CharOffset pages through one enormous line, which line-based reads can only show clipped.
	CharOffset int `json:"char_offset,omitempty" jsonschema:"read the single line at offset from this character on (for lines too long to show whole)"`
}

func (w *Workspace) readFile(_ context.Context, in ReadInput) (string, error) {
	data, err := w.ReadFile(in.Path)
	if err != nil {
		return "", err
	}
	if in.CharOffset > 0 {
		return FormatLinePart(string(data), in.Offset, in.CharOffset), nil
	}
	return FormatLines(string(data), in.Offset, in.Limit), nil
}

// LinePartChars is how many characters of one line a char_offset read shows.
const LinePartChars = 20_000

// FormatLinePart shows characters [charOffset, charOffset+LinePartChars) of line `line` (1-based), with a note
// saying how to read on — the way through a file that is one enormous line.
func FormatLinePart(text string, line, charOffset int) string {
	if line <= 0 {
		line = 1
	}
	lines := strings.SplitN(text, "\n", line+1)
	if line > len(lines) {
		return fmt.Sprintf("(offset %d is past the end of the file)", line)
	}
	runes := []rune(strings.TrimSuffix(lines[line-1], "\r"))
	if charOffset >= len(runes) {
		return fmt.Sprintf("(char_offset %d is past the end: line %d has %d characters)", charOffset, line, len(runes))
	}
	end := min(len(runes), charOffset+LinePartChars)
	out := fmt.Sprintf("%6d\t[characters %d-%d of %d]\t%s\n", line, charOffset, end, len(runes), string(runes[charOffset:end]))
	if end < len(runes) {
		out += fmt.Sprintf("(read on with offset=%d char_offset=%d)\n", line, end)
	}
	return out
}

// FormatLines renders lines [offset, offset+limit) numbered like `cat -n`, each clipped at MaxLineChars, the whole
// bounded by MaxToolOutput, with a note saying how to read on.
func FormatLines(text string, offset, limit int) string {
	if offset <= 0 {
		offset = 1
	}
	if limit <= 0 {
		limit = DefaultReadLimit
	}
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	total := len(lines)
	if total == 0 {
		return "(empty file)"
	}
	if offset > total {
		return fmt.Sprintf("(offset %d is past the end: the file has %d lines)", offset, total)
	}
	// The model chooses limit; past the end it means "the rest", and clamping first keeps offset-1+limit from
	// overflowing into an empty page.
	end := offset - 1 + min(limit, total-(offset-1))
	var b strings.Builder
	last := offset - 1
	for i := offset - 1; i < end; i++ {
		line := lines[i]
		if utf8.RuneCountInString(line) > MaxLineChars {
			line = string([]rune(line)[:MaxLineChars]) + fmt.Sprintf("… [line clipped: %d characters; read the rest with offset=%d char_offset=%d]", utf8.RuneCountInString(lines[i]), i+1, MaxLineChars)
		}
		entry := fmt.Sprintf("%6d\t%s\n", i+1, line)
		if b.Len()+len(entry) > MaxToolOutput && b.Len() > 0 {
			break
		}
		b.WriteString(entry)
		last = i + 1
	}
	if last < total {
		fmt.Fprintf(&b, "(showing lines %d-%d of %d; read on with offset=%d)\n", offset, last, total, last+1)
	}
	return b.String()
}

// WriteInput is the input of write_file.
type WriteInput struct {
	Path    string `json:"path" jsonschema:"file path relative to the workspace root"`
	Content string `json:"content" jsonschema:"the complete new content"`
}

func (w *Workspace) writeFile(_ context.Context, in WriteInput) (string, error) {
	if err := w.WriteFile(in.Path, []byte(in.Content)); err != nil {
		return "", err
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(in.Content), in.Path), nil
}

// EditInput is the input of edit_file.
type EditInput struct {
	Path       string `json:"path" jsonschema:"file path relative to the workspace root"`
	OldString  string `json:"old_string" jsonschema:"exact text to replace"`
	NewString  string `json:"new_string" jsonschema:"replacement text"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence instead of requiring exactly one"`
}

func (w *Workspace) editFile(_ context.Context, in EditInput) (string, error) {
	if in.OldString == "" {
		return "", errors.New("old_string is empty")
	}
	data, err := w.ReadFile(in.Path)
	if err != nil {
		return "", err
	}
	text := string(data)
	n := strings.Count(text, in.OldString)
	switch {
	case n == 0:
		return "", fmt.Errorf("old_string not found in %s", in.Path)
	case n > 1 && !in.ReplaceAll:
		return "", fmt.Errorf("old_string occurs %d times in %s; give more context so it matches once, or set replace_all", n, in.Path)
	}
	if in.ReplaceAll {
		text = strings.ReplaceAll(text, in.OldString, in.NewString)
	} else {
		text = strings.Replace(text, in.OldString, in.NewString, 1)
	}
	if err := w.WriteFile(in.Path, []byte(text)); err != nil {
		return "", err
	}
	return fmt.Sprintf("replaced %d occurrence(s) in %s", n, in.Path), nil
}

// GlobInput is the input of glob.
type GlobInput struct {
	Pattern string `json:"pattern" jsonschema:"glob pattern relative to the workspace root, e.g. **/*.go"`
}

func (w *Workspace) glob(ctx context.Context, in GlobInput) (string, error) {
	re, err := GlobRegexp(in.Pattern)
	if err != nil {
		return "", err
	}
	var matches []string
	err = fs.WalkDir(w.fs.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil || d.IsDir() {
			return nil
		}
		if re.MatchString(rel) {
			matches = append(matches, rel)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(matches)
	if len(matches) == 0 {
		return "no files match " + in.Pattern, nil
	}
	more := ""
	if len(matches) > maxMatches {
		more = fmt.Sprintf("... and %d more\n", len(matches)-maxMatches)
		matches = matches[:maxMatches]
	}
	return strings.Join(matches, "\n") + "\n" + more, nil
}

// GlobRegexp translates a glob with ** into an anchored regular expression over slash-separated paths.
func GlobRegexp(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch c {
		case '*':
			if i+1 < len(pattern) && pattern[i+1] == '*' {
				i++
				if i+1 < len(pattern) && pattern[i+1] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("bad glob %q: %w", pattern, err)
	}
	return re, nil
}

// GrepInput is the input of grep.
type GrepInput struct {
	Pattern string `json:"pattern" jsonschema:"regular expression (RE2 syntax)"`
	Path    string `json:"path,omitempty" jsonschema:"directory or file to search; default the whole workspace"`
	Glob    string `json:"glob,omitempty" jsonschema:"only search files whose path matches this glob"`
}

func (w *Workspace) grep(ctx context.Context, in GrepInput) (string, error) {
	re, err := regexp.Compile(in.Pattern)
	if err != nil {
		return "", fmt.Errorf("bad pattern: %w", err)
	}
	var only *regexp.Regexp
	if in.Glob != "" {
		if only, err = GlobRegexp(in.Glob); err != nil {
			return "", err
		}
	}
	start, err := w.Resolve(in.Path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	count := 0
	// Every step goes through os.Root: a directory swapped for a link while the walk runs cannot lead it out.
	err = fs.WalkDir(w.fs.FS(), filepath.ToSlash(w.rel(start)), func(rel string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil || d.IsDir() || count >= maxMatches {
			return nil
		}
		if only != nil && !only.MatchString(rel) {
			return nil
		}
		if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			return nil // FIFOs, devices, sockets
		}
		data, ok := w.grepRead(rel, d.Type()&fs.ModeSymlink != 0)
		if !ok || bytes.IndexByte(data, 0) >= 0 {
			return nil
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64*1024), maxGrepFileBytes)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if re.MatchString(line) {
				if utf8.RuneCountInString(line) > 300 {
					line = string([]rune(line)[:300]) + "…"
				}
				fmt.Fprintf(&b, "%s:%d: %s\n", rel, n, line)
				count++
				if count >= maxMatches || b.Len() > MaxToolOutput {
					b.WriteString("... (more matches not shown; narrow the pattern or path)\n")
					count = maxMatches
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if count == 0 {
		return "no matches for " + in.Pattern, nil
	}
	return b.String(), nil
}

// grepRead reads a file met while grepping, through os.Root, if it is a regular file of at most
// maxGrepFileBytes. A link is first resolved by Resolve, which accepts absolute links that stay inside the
// workspace (os.Root follows only relative ones); the resolved path is then opened through os.Root, so a link
// swapped in after that is still refused.
func (w *Workspace) grepRead(rel string, link bool) ([]byte, bool) {
	name := filepath.FromSlash(rel)
	if link {
		real, err := w.Resolve(rel)
		if err != nil {
			return nil, false
		}
		name = w.rel(real)
	}
	f, fi, err := w.openRegular(name)
	if err != nil || fi.Size() > maxGrepFileBytes {
		if f != nil {
			f.Close()
		}
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGrepFileBytes))
	return data, err == nil
}

func displayPath(p string) string {
	if p == "" {
		return "the workspace root"
	}
	return p
}
