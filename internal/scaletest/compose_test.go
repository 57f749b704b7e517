package scaletest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"
	"gopkg.in/yaml.v3"

	"github.com/deepresearch/deepresearch/internal/cli"
	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/llm/providers"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/export"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

// deploy/compose.yaml, checked and run without Docker (CI has none): its structure (images pinned, no secret,
// health checks, published ports on loopback, commands the CLI's own parser accepts), then the same commands
// it gives each service — a real PostgreSQL set up as the postgres image sets it up from the service's
// environment, a real Temporal server, the workers' processes with the file's arguments and environment, the
// viewer — with the services' host names mapped to loopback and the containers' folders to temporary ones.

// composeFile is the part of the Compose specification deploy/compose.yaml uses.
type composeFile struct {
	Name     string                    `yaml:"name"`
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image string `yaml:"image"`
	Build *struct {
		Context    string `yaml:"context"`
		Dockerfile string `yaml:"dockerfile"`
	} `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	Healthcheck *struct {
		Test        []string `yaml:"test"`
		Interval    string   `yaml:"interval"`
		Timeout     string   `yaml:"timeout"`
		StartPeriod string   `yaml:"start_period"`
		Retries     int      `yaml:"retries"`
	} `yaml:"healthcheck"`
	DependsOn map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Deploy struct {
		Replicas int `yaml:"replicas"`
	} `yaml:"deploy"`
}

// ourImage: the services that run the image the Dockerfile builds.
func (s composeService) ourImage() bool { return s.Build != nil }

var (
	// secretName matches the names of variables and keys that hold credentials.
	secretName = regexp.MustCompile(`(?i)(password|passwd|secret|token|api_?key|_key$|credential)`)
	// interpRe is Compose's interpolation: $$, ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?err}, ${VAR?err}, $VAR.
	interpRe = regexp.MustCompile(`\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)
	// onlyVar is a value that is one variable with no literal default: ${VAR}, ${VAR:-}, ${VAR:?message}.
	onlyVar = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-|:?\?[^}]*)?\}$`)
	// urlPassword finds a URL's user-information password.
	urlPassword = regexp.MustCompile(`[a-z][a-z0-9+.-]*://[^/@\s:]*:([^@\s]*)@`)
	pinnedImage = regexp.MustCompile(`^[a-z0-9][a-z0-9./_-]*:[0-9]+(\.[0-9]+)+[A-Za-z0-9._-]*(@sha256:[0-9a-f]{64})?$|@sha256:[0-9a-f]{64}$`)
)

// interpolate expands Compose's variables from env.
func interpolate(s string, env map[string]string) (string, error) {
	var err error
	out := interpRe.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		sm := interpRe.FindStringSubmatch(m)
		name, op, arg := sm[1]+sm[4], sm[2], sm[3]
		v, set := env[name]
		switch op {
		case ":-":
			if v == "" {
				return arg
			}
		case "-":
			if !set {
				return arg
			}
		case ":?", "?":
			if !set || (op == ":?" && v == "") {
				if err == nil {
					err = fmt.Errorf("$%s: %s", name, arg)
				}
			}
		}
		return v
	})
	return out, err
}

// composeVars lists the variables a text refers to.
func composeVars(s string) []string {
	var out []string
	for _, m := range interpRe.FindAllStringSubmatch(s, -1) {
		if name := m[1] + m[4]; name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// secretProblems lists the credentials written into a compose file's text: a key or variable whose name says
// it holds a credential with any value other than one variable (and no literal default), and a URL with a
// password that is not a variable.
func secretProblems(text string) ([]string, error) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(text), &root); err != nil {
		return nil, err
	}
	var out []string
	var walk func(n *yaml.Node, key string)
	walk = func(n *yaml.Node, key string) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c, key)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], n.Content[i].Value)
			}
		case yaml.ScalarNode:
			v := n.Value
			name := key
			if k, val, ok := strings.Cut(v, "="); ok && n.Tag == "!!str" && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`).MatchString(k) {
				name, v = k, val // an environment list entry, KEY=value
			}
			if secretName.MatchString(name) && v != "" && !onlyVar.MatchString(v) {
				out = append(out, fmt.Sprintf("line %d: %s is given %q: read it from the environment (${%s})", n.Line, name, v, name))
			}
			for _, m := range urlPassword.FindAllStringSubmatch(v, -1) {
				if !onlyVar.MatchString(m[1]) {
					out = append(out, fmt.Sprintf("line %d: a URL carries the password %q", n.Line, m[1]))
				}
			}
		}
	}
	walk(&root, "")
	return out, nil
}

// The checker itself, on hostile versions: a key written in, a password in a URL, a literal default for a
// secret, a list-form environment entry; and what must pass.
func TestComposeSecretCheckCatchesSecrets(t *testing.T) {
	cases := []struct {
		text string
		bad  int
	}{
		{"services:\n  w:\n    environment:\n      OPENAI_API_KEY: sk-live-1234\n", 1},
		{"services:\n  w:\n    environment:\n      DEEPRESEARCH_STATE: postgres://u:hunter2@db/x\n", 1},
		{"services:\n  w:\n    environment:\n      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-changeme}\n", 1},
		{"services:\n  w:\n    environment:\n      - TAVILY_API_KEY=tvly-abc\n      - PLAIN=1\n", 1},
		{"services:\n  w:\n    environment:\n      DEEPRESEARCH_TOKEN: \"${DEEPRESEARCH_TOKEN}x\"\n", 1},
		{"services:\n  w:\n    environment:\n      OPENAI_API_KEY: ${OPENAI_API_KEY:-}\n      P: ${P:?set it}\n      U: postgres://u:${P:?set P}@db/x\n", 0},
		{"services:\n  w:\n    environment:\n      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?set it}\n      DEEPRESEARCH_TOKEN: ${DEEPRESEARCH_TOKEN}\n", 0},
	}
	for _, c := range cases {
		got, err := secretProblems(c.text)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != c.bad {
			t.Errorf("%q: %d problems %q, want %d", c.text, len(got), got, c.bad)
		}
	}
}

// composePaths are deploy/compose.yaml and its .env.example.
func composePaths(t testing.TB) (compose, envExample string) {
	dir := filepath.Join(repoRoot(t), "deploy")
	return filepath.Join(dir, "compose.yaml"), filepath.Join(dir, ".env.example")
}

func loadCompose(t testing.TB) (*composeFile, string) {
	t.Helper()
	file, _ := composePaths(t)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	if err := yaml.Unmarshal(raw, &cf); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &cf, string(raw)
}

// checkCLI checks a deepresearch command line with the CLI's own command tree and flag parser.
func checkCLI(args []string) error {
	root := cli.NewRootCmd(&cli.App{Getenv: func(string) string { return "" }})
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root {
		return fmt.Errorf("%q names no command", args)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if cmd.Args != nil {
		if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
			return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
		}
	}
	return nil
}

// healthArgs is a deepresearch service's health check as a command line of the binary.
func healthArgs(s composeService) ([]string, error) {
	if s.Healthcheck == nil || len(s.Healthcheck.Test) < 2 {
		return nil, fmt.Errorf("no health check")
	}
	test := s.Healthcheck.Test
	if test[0] != "CMD" {
		return nil, fmt.Errorf("health check %q: the image has no shell: use [\"CMD\", \"/deepresearch\", …]", test)
	}
	if test[1] != "/deepresearch" {
		return nil, fmt.Errorf("health check %q does not run /deepresearch", test)
	}
	return test[2:], nil
}

// submitLine is the compose file's own example of submitting a run: `docker compose run --rm SERVICE ARGS…`.
var submitLine = regexp.MustCompile(`(?m)^#\s+docker compose run --rm (.+)$`)

// The file's structure, without running anything.
func TestComposeFile(t *testing.T) {
	cf, raw := loadCompose(t)
	for _, name := range []string{"postgres", "temporal", "worker", "viewer"} {
		if _, ok := cf.Services[name]; !ok {
			t.Errorf("no %s service", name)
		}
	}
	if r := cf.Services["worker"].Deploy.Replicas; r < 2 {
		t.Errorf("worker: %d replicas, want at least 2", r)
	}
	names := make([]string, 0, len(cf.Services))
	for name := range cf.Services {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := cf.Services[name]
		switch {
		case s.ourImage():
			if ctx := filepath.Join(repoRoot(t), "deploy", s.Build.Context); filepath.Clean(ctx) != repoRoot(t) {
				t.Errorf("%s: build context %s is not the repository's root", name, s.Build.Context)
			} else if _, err := os.Stat(filepath.Join(ctx, s.Build.Dockerfile)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case !pinnedImage.MatchString(s.Image):
			t.Errorf("%s: image %q is not pinned to a version (NAME:1.2.3 or a digest)", name, s.Image)
		}
		if s.Healthcheck == nil || len(s.Healthcheck.Test) < 2 || (s.Healthcheck.Test[0] != "CMD" && s.Healthcheck.Test[0] != "CMD-SHELL") {
			t.Errorf("%s: no health check", name)
		}
		for dep, d := range s.DependsOn {
			if d.Condition != "service_healthy" {
				t.Errorf("%s: depends on %s with condition %q, want service_healthy", name, dep, d.Condition)
			}
			if _, ok := cf.Services[dep]; !ok {
				t.Errorf("%s: depends on %s, which is no service", name, dep)
			}
		}
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") || strings.Count(p, ":") != 2 {
				t.Errorf("%s: port %q is published beyond the host's loopback (write 127.0.0.1:HOST:CONTAINER)", name, p)
			}
		}
		if !s.ourImage() {
			continue
		}
		if err := checkCLI(s.Command); err != nil {
			t.Errorf("%s: command %q: %v", name, s.Command, err)
		}
		h, err := healthArgs(s)
		if err == nil {
			err = checkCLI(h)
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The documented submission runs a command the CLI accepts, on a service that exists.
	m := submitLine.FindStringSubmatch(raw)
	if m == nil {
		t.Fatalf("the header shows no `docker compose run --rm SERVICE …` submission")
	}
	words, err := shellWords(m[1], func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cf.Services[words[0]]; !ok {
		t.Errorf("the submission runs in service %q, which does not exist", words[0])
	}
	if err := checkCLI(words[1:]); err != nil {
		t.Errorf("the submission %q: %v", words[1:], err)
	}

	// No secret in the file; every variable it reads is in .env.example, the secret ones empty there.
	problems, err := secretProblems(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("compose.yaml: %s", p)
	}
	_, envFile := composePaths(t)
	example := readEnvFile(t, envFile)
	var content strings.Builder
	var scalars func(n *yaml.Node)
	scalars = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			content.WriteString(n.Value + "\n")
		}
		for _, c := range n.Content {
			scalars(c)
		}
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(raw), &root); err != nil {
		t.Fatal(err)
	}
	scalars(&root)
	for _, v := range composeVars(content.String()) {
		val, ok := example[v]
		if !ok {
			t.Errorf("compose.yaml reads $%s, which .env.example does not list", v)
		}
		if secretName.MatchString(v) && val != "" {
			t.Errorf(".env.example gives the secret %s a value", v)
		}
	}
	// Every provider's key and endpoint variable reaches the workers: a key set in .env is never silently
	// dropped on the way to the process that uses it.
	env := cf.Services["worker"].Environment
	want := slices.Concat(providers.Builtin().KeyEnvs(), websearch.KeyEnvs())
	for _, p := range providers.Builtin().Rows() {
		if p.BaseURLEnv != "" {
			want = append(want, p.BaseURLEnv)
		}
	}
	for _, p := range websearch.Providers() {
		if p.URLEnv != "" {
			want = append(want, p.URLEnv)
		}
	}
	for _, k := range want {
		if v, ok := env[k]; !ok || !slices.Contains(composeVars(v), k) {
			t.Errorf("worker: $%s is not passed from the environment (got %q)", k, v)
		}
	}
}

// readEnvFile reads KEY=value lines (comments and blank lines skipped).
func readEnvFile(t testing.TB, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("%s: %q is not KEY=value", file, l)
		}
		out[k] = v
	}
	return out
}

// composeRun is deploy/compose.yaml brought up without Docker.
type composeRun struct {
	t       *testing.T
	cf      *composeFile
	df      *dockerfile
	bin     string
	env     map[string]string // what deploy/.env would hold
	hosts   map[string]string // service HOST:PORT → loopback HOST:PORT
	volumes map[string]string // named volume → folder
	// emptyPath is the processes' PATH: an empty folder, as distroless has nothing to run on its PATH.
	emptyPath string
	oneOffs   int
}

// service is a running service's process.
type service struct {
	*proc
	exited chan struct{}
}

// instance is one container of a service: its folders and ports.
type instance struct {
	name  string
	svc   composeService
	dirs  map[string]string // container path → folder
	ports map[string]string // container port → loopback port
}

var localAddr = regexp.MustCompile(`\b(0\.0\.0\.0|127\.0\.0\.1|localhost):([0-9]+)\b`)

func (r *composeRun) instance(name string, n int) *instance {
	t := r.t
	s := r.cf.Services[name]
	in := &instance{name: fmt.Sprintf("%s-%d", name, n), svc: s, dirs: map[string]string{}, ports: map[string]string{}}
	for _, v := range s.Volumes {
		v, err := interpolate(v, r.env)
		if err != nil {
			t.Fatalf("%s: volume %s: %v", name, v, err)
		}
		parts := strings.Split(v, ":")
		src, target := parts[0], parts[1]
		switch {
		case filepath.IsAbs(src):
		case strings.HasPrefix(src, "."):
			src = filepath.Join(repoRoot(t), "deploy", src)
		default:
			if _, ok := r.cf.Volumes[src]; !ok {
				t.Fatalf("%s: volume %s is not declared", name, src)
			}
			if r.volumes[src] == "" {
				r.volumes[src] = filepath.Join(t.TempDir(), src)
				if err := os.MkdirAll(r.volumes[src], 0o755); err != nil {
					t.Fatal(err)
				}
			}
			src = r.volumes[src]
		}
		in.dirs[target] = src
	}
	// The image's working folder, when no volume holds it, is the container's own layer; its home likewise.
	for _, d := range []string{r.df.workdir, "/home/nonroot"} {
		if _, ok := in.dirs[d]; !ok {
			in.dirs[d] = filepath.Join(t.TempDir(), in.name+strings.ReplaceAll(d, "/", "_"))
			if err := os.MkdirAll(in.dirs[d], 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return in
}

// value maps one value of the compose file (before interpolation) into this host: a container's own addresses
// to free loopback ports, variables from the .env, service names to where the services run, container folders
// to the instance's folders.
func (r *composeRun) value(in *instance, raw string) string {
	t := r.t
	s := localAddr.ReplaceAllStringFunc(raw, func(m string) string {
		port := localAddr.FindStringSubmatch(m)[2]
		if in.ports[port] == "" {
			in.ports[port] = freePort(t)
		}
		return "127.0.0.1:" + in.ports[port]
	})
	s, err := interpolate(s, r.env)
	if err != nil {
		t.Fatalf("%s: %q: %v", in.name, raw, err)
	}
	for from, to := range r.hosts {
		s = strings.ReplaceAll(s, from, to)
	}
	return r.path(in, s)
}

// path maps a container path to the instance's folder.
func (r *composeRun) path(in *instance, s string) string {
	targets := make([]string, 0, len(in.dirs))
	for d := range in.dirs {
		targets = append(targets, d)
	}
	sort.Slice(targets, func(i, j int) bool { return len(targets[i]) > len(targets[j]) })
	for _, d := range targets {
		if s == d || strings.HasPrefix(s, d+"/") {
			return in.dirs[d] + s[len(d):]
		}
	}
	return s
}

// command is a process of the binary in the instance's container: the image's ENV and the service's
// environment, nothing of this test's own environment, an empty PATH (distroless has nothing on it), the image's
// working folder.
func (r *composeRun) command(ctx context.Context, in *instance, args ...string) *proc {
	p := &proc{}
	p.cmd = exec.CommandContext(ctx, r.bin, args...)
	env := []string{"HOME=" + in.dirs["/home/nonroot"], "PATH=" + r.emptyPath}
	for k, v := range r.df.env {
		env = append(env, k+"="+r.path(in, v))
	}
	for k, v := range in.svc.Environment {
		env = append(env, k+"="+r.value(in, v))
	}
	p.cmd.Env = env
	p.cmd.Dir = in.dirs[r.df.workdir]
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	return p
}

// start runs the service's command in the instance.
func (r *composeRun) start(ctx context.Context, in *instance) *service {
	t := r.t
	if err := checkCLI(in.svc.Command); err != nil {
		t.Fatalf("%s: %v", in.name, err)
	}
	args := slices.Clone(in.svc.Command)
	for i := range args {
		args[i] = r.value(in, args[i])
	}
	p := r.command(ctx, in, args...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	return &service{proc: p, exited: exited}
}

// healthy waits until the service's own health check passes in the instance, within the time Compose would give
// it (start period plus retries × interval, on a loaded machine three times that).
func (r *composeRun) healthy(ctx context.Context, in *instance, p *service) {
	t := r.t
	h, err := healthArgs(in.svc)
	if err != nil {
		t.Fatalf("%s: %v", in.name, err)
	}
	args := make([]string, len(h))
	for i := range h {
		args[i] = r.value(in, h[i])
	}
	hc := in.svc.Healthcheck
	interval, _ := time.ParseDuration(hc.Interval)
	start, _ := time.ParseDuration(hc.StartPeriod)
	deadline := time.Now().Add(3 * (start + time.Duration(hc.Retries)*interval))
	var last string
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			t.Fatalf("%s exited before its health check passed:\n%s", in.name, p.stderr.String())
		default:
		}
		c := r.command(ctx, in, args...)
		if err := c.cmd.Run(); err == nil {
			return
		}
		last = c.stderr.String()
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: health check %q never passed: %s\n%s", in.name, args, last, p.stderr.String())
}

// oneOff runs `docker compose run --rm SERVICE ARGS…`: the service's environment and mounts, a fresh container.
func (r *composeRun) oneOff(ctx context.Context, service string, args ...string) *proc {
	r.oneOffs++
	in := r.instance(service, 100+r.oneOffs)
	for i := range args {
		args[i] = r.value(in, args[i])
	}
	p := r.command(ctx, in, args...)
	_ = p.cmd.Run()
	return p
}

func freePort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// The services of deploy/compose.yaml run as the file says, without Docker: the postgres service's database and
// user, a Temporal server with the "default" namespace the file's workers use, the workers' replicas, the viewer.
// The run is submitted with the file's own example command; it must finish with every citation grounded in the
// texts stored in PostgreSQL, be listed by the viewer, and a PDF asked for in the container must fail saying
// that the image has no Chromium.
func TestComposeServicesRunWithoutDocker(t *testing.T) {
	cf, raw := loadCompose(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	r := &composeRun{t: t, cf: cf, hosts: map[string]string{}, volumes: map[string]string{}, emptyPath: t.TempDir()}
	built := make(chan struct{})
	go func() {
		defer close(built)
		r.bin, r.df = dockerBuild(t)
	}()
	model := fakeModel(t, 20*time.Millisecond)
	docs := filepath.Join(t.TempDir(), "corpus")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range openaifake.KilnDocs {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// deploy/.env as an operator fills it in from .env.example.
	_, envFile := composePaths(t)
	r.env = readEnvFile(t, envFile)
	for k, v := range map[string]string{"POSTGRES_PASSWORD": randomHex(t, 16), "DEEPRESEARCH_TOKEN": randomHex(t, 16),
		"DEEPRESEARCH_PROVIDER": "openai", "DEEPRESEARCH_MODEL": "fake-research", "DEEPRESEARCH_BASE_URL": model.BaseURL(),
		"OPENAI_API_KEY": "fake-key", "DEEPRESEARCH_CORPUS": docs} {
		r.env[k] = v
	}

	// postgres: the image creates POSTGRES_USER with POSTGRES_PASSWORD and the database POSTGRES_DB it owns.
	pg := pgtest.New(t)
	pgEnv := map[string]string{}
	for k, v := range cf.Services["postgres"].Environment {
		var err error
		if pgEnv[k], err = interpolate(v, r.env); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	user, db := pgx.Identifier{pgEnv["POSTGRES_USER"]}.Sanitize(), pgx.Identifier{pgEnv["POSTGRES_DB"]}.Sanitize()
	for _, q := range []string{"CREATE ROLE " + user + " LOGIN PASSWORD '" + pgEnv["POSTGRES_PASSWORD"] + "'",
		"CREATE DATABASE " + db + " OWNER " + user} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close(ctx)
	pgCfg, err := pgx.ParseConfig(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	r.hosts["postgres:5432"] = fmt.Sprintf("%s:%d", pgCfg.Host, pgCfg.Port)

	// temporal: a real server; `temporal server start-dev` creates the "default" namespace, so it is registered.
	hostPort, _ := temporalServer(t)
	r.hosts["temporal:7233"] = hostPort
	nc, err := client.NewNamespaceClient(client.Options{HostPort: hostPort})
	if err != nil {
		t.Fatal(err)
	}
	err = nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: "default", WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)})
	if _, exists := err.(*serviceerror.NamespaceAlreadyExists); err != nil && !exists {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if _, err := nc.Describe(ctx, "default"); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	nc.Close()
	<-built
	if r.bin == "" {
		t.FailNow()
	}

	// The workers, as many as the file's replicas, and the viewer; each must pass its own health check.
	var workers []*service
	for i := range cf.Services["worker"].Deploy.Replicas {
		in := r.instance("worker", i+1)
		w := r.start(ctx, in)
		workers = append(workers, w)
		r.healthy(ctx, in, w)
	}
	viewerIn := r.instance("viewer", 1)
	viewer := r.start(ctx, viewerIn)
	r.healthy(ctx, viewerIn, viewer)

	// The file's own submission, with the question the fake model knows.
	m := submitLine.FindStringSubmatch(raw)
	words, err := shellWords(m[1], func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	words[len(words)-1] = question
	sub := r.oneOff(ctx, words[0], words[1:]...)
	if sub.cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("submission %q: exit %d\n%s", words, sub.cmd.ProcessState.ExitCode(), sub.stderr.String())
	}
	runID := strings.TrimSpace(sub.stdout.String())
	if !regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`).MatchString(runID) {
		t.Fatalf("the submission printed %q, not a run id\n%s", runID, sub.stderr.String())
	}

	// Wait for the workers to finish it, reading the shared state as the workers' URL names it.
	stateURL := r.value(viewerIn, cf.Services["worker"].Environment["DEEPRESEARCH_STATE"])
	var sdb *state.DB
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if sdb == nil {
			sdb, _ = state.OpenRunReadOnly(ctx, stateURL, runID)
		}
		if sdb != nil {
			if status, _, _ := sdb.Meta(ctx, "status"); status == research.RunDone {
				break
			} else if status == research.RunFailed {
				t.Fatalf("run %s failed\nworker 1:\n%s\nworker 2:\n%s", runID, workers[0].stderr.String(), workers[len(workers)-1].stderr.String())
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not finish in 5 minutes\nworker 1:\n%s", runID, workers[0].stderr.String())
		}
	}
	defer sdb.Close()

	// The report, as `docker compose run --rm worker show RUN` prints it, grounded in the shared state.
	out := t.TempDir()
	if p := r.oneOff(ctx, "worker", "show", runID, "--format", "json", "--output", filepath.Join(out, research.ReportJSONFile)); p.cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("show --format json: %s", p.stderr.String())
	}
	rep, err := research.LoadReport(out)
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, ctx, sdb, rep)
	if p := r.oneOff(ctx, "worker", "show", runID); p.cmd.ProcessState.ExitCode() != 0 || !strings.Contains(p.stdout.String(), "[1]") {
		t.Errorf("show %s: exit %d\n%s%s", runID, p.cmd.ProcessState.ExitCode(), p.stdout.String(), p.stderr.String())
	}

	// PDF in the container: no Chromium in the image, a clear error, no file.
	pdf := filepath.Join(out, "report.pdf")
	p := r.oneOff(ctx, "worker", "show", runID, "--format", "pdf", "--output", pdf)
	if p.cmd.ProcessState.ExitCode() != 1 || !strings.Contains(p.stderr.String(), export.ErrNoChromium.Error()) {
		t.Errorf("PDF without Chromium: exit %d, stderr %q; want exit 1 and %q", p.cmd.ProcessState.ExitCode(), p.stderr.String(), export.ErrNoChromium)
	}
	if _, err := os.Stat(pdf); err == nil {
		t.Errorf("a PDF without Chromium left %s behind", pdf)
	}

	// The viewer lists the run (from the shared state), with its token, and refuses without it.
	api := "http://127.0.0.1:" + viewerIn.ports["8787"] + "/api/runs"
	for _, withToken := range []bool{false, true} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api, nil)
		if withToken {
			req.Header.Set("Authorization", "Bearer "+r.env["DEEPRESEARCH_TOKEN"])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case !withToken && resp.StatusCode != http.StatusUnauthorized:
			t.Errorf("the viewer answered %s without the token", resp.Status)
		case withToken && (resp.StatusCode != http.StatusOK || !strings.Contains(string(body), runID)):
			t.Errorf("the viewer's run list (%s) does not show %s: %s", resp.Status, runID, body)
		}
	}
	for i, w := range workers {
		if strings.Contains(w.stderr.String(), r.env["POSTGRES_PASSWORD"]) {
			t.Errorf("worker %d logged the database password", i+1)
		}
	}
	t.Logf("run %s on %d workers: %d citations, %d evidence items, %d model calls; listed by the viewer; PDF refused: %s",
		runID, len(workers), len(rep.Citations), len(rep.Evidence), rep.Stats.Calls, strings.TrimSpace(p.stderr.String()))
}

// The checks the structure test leans on, on mistakes: a misspelt flag or command, a missing argument; and
// Compose's interpolation, whose required variables are what makes `docker compose up` refuse an empty .env.
func TestComposeChecksCatchMistakes(t *testing.T) {
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"worker", "--concurrency", "4", "--dir", "/data/worker"}, true},
		{[]string{"worker", "--metrics", "127.0.0.1:9090"}, true},
		{[]string{"worker", "--concurency", "4"}, false},
		{[]string{"wroker", "--concurrency", "4"}, false},
		{[]string{"fetch"}, false},
		{[]string{"probe"}, false},
		{[]string{"serve", "--addr", "0.0.0.0:8787", "--max-runs", "x"}, false},
	} {
		if err := checkCLI(c.args); (err == nil) != c.ok {
			t.Errorf("%q: error %v, want ok=%v", c.args, err, c.ok)
		}
	}
	env := map[string]string{"SET": "v", "EMPTY": ""}
	for _, c := range []struct {
		in, want string
		fails    bool
	}{
		{"${SET}", "v", false},
		{"$SET/x", "v/x", false},
		{"${EMPTY:-d}", "d", false},
		{"${EMPTY-d}", "", false},
		{"${UNSET-d}", "d", false},
		{"${UNSET:-}", "", false},
		{"$$SET", "$SET", false},
		{"${EMPTY:?say it}", "", true},
		{"${UNSET?say it}", "", true},
		{"${EMPTY?fine}", "", false},
	} {
		got, err := interpolate(c.in, env)
		if (err != nil) != c.fails || (!c.fails && got != c.want) {
			t.Errorf("interpolate(%q) = %q, %v; want %q (fails=%v)", c.in, got, err, c.want, c.fails)
		}
	}
}
