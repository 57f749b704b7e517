package scaletest

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The image's build, without Docker: the Dockerfile's `go build` command (its environment, CGO_ENABLED=0, and its
// flags) run over a copy of the repository with .dockerignore applied, as `COPY . .` sees it.

// dockerfile is what the tests read from the Dockerfile.
type dockerfile struct {
	// buildEnv and buildArgs are the build stage's `go build` command: its VAR=value words and its arguments
	// after `go`, with the stage's ARG defaults substituted.
	buildEnv, buildArgs []string
	output              string // the -o path
	args                map[string]string
	// final is the last stage: its FROM image, USER, WORKDIR, ENV and ENTRYPOINT.
	finalFrom, user, workdir string
	env                      map[string]string
	entrypoint               string
	copies                   []string // the final stage's COPY lines
}

var dockerLineRe = regexp.MustCompile(`^([A-Z]+)\s+(.*)$`)

// parseDockerfile reads the instructions the tests rely on. args overrides ARG defaults.
func parseDockerfile(t testing.TB, file string, args map[string]string) *dockerfile {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	d := &dockerfile{args: map[string]string{}, env: map[string]string{}}
	var lines []string
	var cont string
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") && cont == "" {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cont += s + " "
			continue
		}
		lines = append(lines, strings.TrimSpace(cont+l))
		cont = ""
	}
	stage := 0
	for _, l := range lines {
		m := dockerLineRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		inst, rest := m[1], m[2]
		switch inst {
		case "FROM":
			stage++
			d.finalFrom, d.user, d.workdir, d.entrypoint = strings.Fields(rest)[0], "", "", ""
			d.env, d.copies = map[string]string{}, nil
		case "ARG":
			k, v, _ := strings.Cut(rest, "=")
			if o, ok := args[k]; ok {
				v = o
			}
			d.args[k] = v
		case "ENV":
			for _, kv := range strings.Fields(rest) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("Dockerfile: ENV %q: write ENV KEY=value", rest)
				}
				d.env[k] = v
			}
		case "USER":
			d.user = rest
		case "WORKDIR":
			d.workdir = rest
		case "ENTRYPOINT":
			d.entrypoint = rest
		case "COPY":
			d.copies = append(d.copies, rest)
		case "RUN":
			if !strings.Contains(rest, "go build") {
				continue
			}
			words, err := shellWords(rest, func(k string) (string, bool) { v, ok := d.args[k]; return v, ok })
			if err != nil {
				t.Fatalf("Dockerfile: RUN %s: %v", rest, err)
			}
			for len(words) > 0 && strings.HasPrefix(words[0], "--mount=") {
				words = words[1:]
			}
			for len(words) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(words[0]) {
				d.buildEnv, words = append(d.buildEnv, words[0]), words[1:]
			}
			if len(words) < 2 || words[0] != "go" || words[1] != "build" {
				t.Fatalf("Dockerfile: the build step is not one `VAR=value… go build …` command: %q", words)
			}
			d.buildArgs = words[1:]
			if i := slices.Index(d.buildArgs, "-o"); i >= 0 && i+1 < len(d.buildArgs) {
				d.output = d.buildArgs[i+1]
			}
		}
	}
	if stage < 2 || d.buildArgs == nil {
		t.Fatalf("Dockerfile: want a build stage with `go build` and a final stage; found %d stages", stage)
	}
	return d
}

// shellWords splits a POSIX shell command line into words: single and double quotes, backslash escapes outside
// single quotes, ${VAR} and $VAR expanded by lookup (an unknown one is an error). Pipes, lists and other shell
// syntax are refused: the tests run what they can read exactly.
func shellWords(s string, lookup func(string) (string, bool)) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	varRe := regexp.MustCompile(`^\$(\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)
	expand := func(i int) (int, error) {
		m := varRe.FindStringSubmatch(s[i:])
		if m == nil {
			return 0, fmt.Errorf("a $ that is not a variable at %q", s[i:])
		}
		name := m[2] + m[3]
		v, ok := lookup(name)
		if !ok {
			return 0, fmt.Errorf("$%s is not defined", name)
		}
		cur.WriteString(v)
		return len(m[0]), nil
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
			i++
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated '")
			}
			cur.WriteString(s[i+1 : i+1+j])
			inWord, i = true, i+j+2
		case c == '"':
			inWord = true
			i++
			for {
				if i >= len(s) {
					return nil, errors.New(`unterminated "`)
				}
				if s[i] == '"' {
					i++
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
					cur.WriteByte(s[i+1])
					i += 2
					continue
				}
				if s[i] == '$' {
					n, err := expand(i)
					if err != nil {
						return nil, err
					}
					i += n
					continue
				}
				if s[i] == '`' {
					return nil, errors.New("command substitution is not supported")
				}
				cur.WriteByte(s[i])
				i++
			}
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(s[i+1])
			inWord, i = true, i+2
		case c == '$':
			n, err := expand(i)
			if err != nil {
				return nil, err
			}
			inWord, i = true, i+n
		case strings.IndexByte("|&;<>()`", c) >= 0:
			return nil, fmt.Errorf("shell syntax %q is not supported", c)
		default:
			cur.WriteByte(c)
			inWord, i = true, i+1
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// dockerignore reads .dockerignore: one pattern a line, # comments, `**` for any number of folders. Exceptions
// (!pattern) are refused: the copy below implements what the file uses, and must not silently differ from Docker.
func dockerignore(t testing.TB, file string) []string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "!") {
			t.Fatalf(".dockerignore: exception %q: this test's copy of the build context does not implement exceptions", l)
		}
		out = append(out, path.Clean(strings.TrimPrefix(l, "/")))
	}
	return out
}

// ignored reports whether rel (slash-separated, relative to the context) matches a pattern.
func ignored(patterns []string, rel string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return globMatch(strings.Split(p, "/"), strings.Split(rel, "/")) })
}

func globMatch(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(name); i++ {
			if globMatch(pat[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, err := path.Match(pat[0], name[0])
	return err == nil && ok && globMatch(pat[1:], name[1:])
}

// buildContext copies the repository into dst as Docker's build context holds it.
func buildContext(t testing.TB, root, dst string) {
	t.Helper()
	patterns := dockerignore(t, filepath.Join(root, ".dockerignore"))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel != "." && ignored(patterns, rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			return copyFile(p, target)
		}
		return nil // sockets, pipes, links: not sources
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// imageBuild is the binary the Dockerfile's build command makes, built once for the package's tests (the build
// with -trimpath and CGO_ENABLED=0 shares little with the tests' other builds) and removed by TestMain.
var imageBuild struct {
	once sync.Once
	dir  string
	bin  string
	df   *dockerfile
}

// The version and commit the tests stamp through the Dockerfile's ARGs.
var imageArgs = map[string]string{"VERSION": "v9.9.9-image", "COMMIT": "0123456789ab"}

func TestMain(m *testing.M) {
	code := m.Run()
	if imageBuild.dir != "" {
		os.RemoveAll(imageBuild.dir)
	}
	os.Exit(code)
}

// dockerBuild runs the Dockerfile's build command over the build context and returns the binary and what was
// read from the Dockerfile.
func dockerBuild(t testing.TB) (string, *dockerfile) {
	t.Helper()
	imageBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "scaletest-image-")
		if err != nil {
			t.Fatal(err)
		}
		imageBuild.dir = dir
		root := repoRoot(t)
		df := parseDockerfile(t, filepath.Join(root, "Dockerfile"), imageArgs)
		if !slices.Contains(df.buildEnv, "CGO_ENABLED=0") {
			t.Fatalf("Dockerfile: the build runs with %q: want CGO_ENABLED=0 (a static binary for a distroless image)", df.buildEnv)
		}
		ctxDir := filepath.Join(dir, "context")
		buildContext(t, root, ctxDir)
		bin := filepath.Join(dir, "deepresearch")
		buildArgs := slices.Clone(df.buildArgs)
		i := slices.Index(buildArgs, "-o")
		if i < 0 {
			t.Fatalf("Dockerfile: go build %q has no -o", buildArgs)
		}
		buildArgs[i+1] = bin
		cmd := exec.Command("go", buildArgs...)
		cmd.Dir = ctxDir
		cmd.Env = append(os.Environ(), df.buildEnv...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the Dockerfile's build over the .dockerignore'd context: %v\n%s", err, out)
		}
		imageBuild.bin, imageBuild.df = bin, df
	})
	if imageBuild.bin == "" {
		t.Fatal("the Dockerfile's build failed (see the first test that ran it)")
	}
	return imageBuild.bin, imageBuild.df
}

// The Dockerfile's own build command, with CGO_ENABLED=0, over the context .dockerignore leaves, produces a
// static binary (no interpreter, no shared library) that starts and prints the stamped version in an empty
// environment, as in a distroless container; the final stage runs it as a user that is not root.
func TestDockerfileBuildsAStaticBinary(t *testing.T) {
	bin, df := dockerBuild(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary asks for a dynamic loader (PT_INTERP): not static")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v (%v)", libs, err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "version")
	cmd.Env = []string{}
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("version: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "deepresearch v9.9.9-image (commit 0123456789ab)"; got != want {
		t.Errorf("version printed %q, want %q", got, want)
	}
	switch {
	case df.finalFrom != "gcr.io/distroless/static-debian12:nonroot" && df.finalFrom != "scratch":
		t.Errorf("final stage FROM %s: want distroless static nonroot or scratch", df.finalFrom)
	case df.user == "" || df.user == "root" || strings.HasPrefix(df.user, "0"):
		t.Errorf("final stage USER %q: the image must not run as root", df.user)
	}
	if !strings.Contains(df.entrypoint, strings.TrimPrefix(df.output, "/out")) {
		t.Errorf("ENTRYPOINT %s does not run the binary built at %s", df.entrypoint, df.output)
	}
	for k := range df.env {
		if secretName.MatchString(k) {
			t.Errorf("the image's ENV sets %s: secrets come from the environment at run time", k)
		}
	}
	for k := range df.args {
		if secretName.MatchString(k) {
			t.Errorf("the Dockerfile takes ARG %s: build arguments stay in the image's history", k)
		}
	}
}

// The copy of the build context honours .dockerignore as Docker does for the patterns it uses: run folders,
// test data and the history are left out, the sources the build embeds are kept.
func TestBuildContextHonoursDockerignore(t *testing.T) {
	patterns := dockerignore(t, filepath.Join(repoRoot(t), ".dockerignore"))
	for rel, want := range map[string]bool{
		".git":                             true,
		"runs":                             true,
		"research/runs":                    true,
		"research/testdata":                true,
		"sources/corpus/testdata":          true,
		"internal/webui/node_modules":      true,
		"research/report_test.go":          true,
		"internal/scaletest":               true,
		"deploy/.env":                      true,
		"docs/zh/quickstart.md":            false, // embedded by docs/zh
		"internal/webui/assets/static":     false,
		"lexical/bilingual/cedict.gz":      false,
		"cmd/deepresearch":                 false,
		"go.sum":                           false,
		"deploy/compose.yaml":              false,
		"research/extractive/qualitybench": false,
	} {
		if got := ignored(patterns, rel); got != want {
			t.Errorf("%s: ignored=%v, want %v", rel, got, want)
		}
	}
}
