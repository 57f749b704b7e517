package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/deepresearch/deepresearch/base/redact"
	"github.com/deepresearch/deepresearch/base/termsafe"
	"github.com/deepresearch/deepresearch/internal/config"
)

// annotationNoTrustPrompt marks commands that never ask whether to trust the working folder.
const annotationNoTrustPrompt = "no-trust-prompt"

// decideLocalTrust settles, once per command, whether the working folder's deepresearch.yaml and .mcp.json may
// take effect. They do when the folder is recorded as trusted (deepresearch trust) or the user says yes when
// asked on a terminal; otherwise one line on stderr says they were ignored and how to trust the folder.
// Explicit --config and --mcp files are the user's own choice and need no trust.
func (a *App) decideLocalTrust(cmd *cobra.Command, getenv func(string) string) {
	wd, err := os.Getwd()
	if err != nil {
		return
	}
	present := config.LocalFiles(wd)
	if len(present) == 0 {
		return
	}
	trust := config.NewTrust(getenv)
	if trust.Trusted(wd) {
		a.localTrusted = true
		return
	}
	names := make([]string, len(present))
	for i, f := range present {
		names[i] = "./" + f
	}
	what := strings.Join(names, " and ")
	if cmd.Annotations[annotationNoTrustPrompt] == "" && cmd.Annotations[annotationInspect] == "" && a.interactive() {
		fmt.Fprintf(a.Stderr, "This folder (%s) has %s. They can send your API keys to another host and start programs.\n"+
			"Trust this folder and use them? [y/N] ", wd, what)
		if answer := readLine(a.Stdin); answer == "y" || answer == "yes" {
			if _, err := trust.Add(wd); err != nil {
				fmt.Fprintf(a.Stderr, "warning: %v (trusted for this run only)\n", err)
			}
			a.localTrusted = true
			return
		}
	}
	fmt.Fprintf(a.Stderr, "note: ignoring %s: this folder is not trusted; to use them run `deepresearch trust %s` (or pass --config/--mcp)\n",
		what, shellQuote(wd))
}

// secrets are the API keys in the environment (config.Config.Secrets), which no printed error may show.
func (a *App) secrets() []string {
	if a.Config != nil {
		return a.Config.Secrets()
	}
	return redact.EnvValues(a.getenv, config.KeyVars(a.Providers)...)
}

// interactive reports whether a person is at the terminal: stdin and stderr both terminals.
func (a *App) interactive() bool {
	in, ok := a.Stdin.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return false
	}
	errf, ok := termsafe.Unwrap(a.Stderr).(*os.File)
	return ok && term.IsTerminal(int(errf.Fd()))
}

// readLine reads one answer byte by byte, so nothing after the newline is taken from stdin.
func readLine(r io.Reader) string {
	var b []byte
	one := make([]byte, 1)
	for len(b) < 64 {
		n, err := r.Read(one)
		if n == 1 {
			if one[0] == '\n' {
				break
			}
			b = append(b, one[0])
		}
		if err != nil {
			break
		}
	}
	return strings.ToLower(strings.TrimSpace(string(b)))
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[](){}<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func newTrustCmd(app *App) *cobra.Command {
	var list bool
	var remove bool
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Trust a folder's deepresearch.yaml and .mcp.json (default: the working folder)",
		Long: `A deepresearch.yaml in the working folder can point a model's base_url at any host, which would then receive
your API key, and a .mcp.json starts programs with your rights. deepresearch therefore ignores both in a folder
you have not trusted, and says so. trust records a folder as trusted (in the user configuration directory), so
its files take effect from then on; --remove forgets it, --list shows the trusted folders.`,
		Args:        cobra.MaximumNArgs(1),
		Annotations: map[string]string{annotationInspect: "yes", annotationNoTrustPrompt: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			t := config.NewTrust(app.getenv)
			if list {
				dirs, err := t.List()
				if err != nil {
					return err
				}
				for _, d := range dirs {
					fmt.Fprintln(app.Stdout, d)
				}
				return nil
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if remove {
				return t.Remove(dir)
			}
			d, err := t.Add(dir)
			if err != nil {
				return err
			}
			files := config.LocalFiles(d)
			if len(files) == 0 {
				files = []string{"nothing yet"}
			}
			fmt.Fprintf(app.Stdout, "trusted %s (%s)\n", d, strings.Join(files, ", "))
			return nil
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the trusted folders")
	cmd.Flags().BoolVar(&remove, "remove", false, "stop trusting the folder")
	return cmd
}
