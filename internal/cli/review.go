package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/deepresearch/deepresearch/base/runfolder"
	"github.com/deepresearch/deepresearch/base/termsafe"
	"github.com/deepresearch/deepresearch/research"
)

// editFile is where run --review puts the plan for $EDITOR, in the run folder. A failed edit leaves it there,
// so that nothing the person wrote is lost.
const editFile = "plan.edit.yaml"

// errReviewQuit ends a run whose plan the person declined.
var errReviewQuit = errors.New("the plan was not accepted, so nothing was searched")

// terminalIO is a conversation with the person on a terminal: run --review and --clarify ask there. It reads
// lines in a goroutine so that Ctrl-C (the context) ends a wait for an answer.
type terminalIO struct {
	in     *os.File
	out    io.Writer
	getenv func(string) string
	lines  chan string
	eof    chan struct{}
}

// newTerminalIO returns the terminal of in and out, or an error saying why there is none: review and clarifying
// questions need a person at a terminal, and never wait on a pipe or in batch.
func newTerminalIO(in io.Reader, out io.Writer, getenv func(string) string, what string) (*terminalIO, error) {
	f, ok := in.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, fmt.Errorf("%s needs a terminal to ask on, and standard input is not one", what)
	}
	t := &terminalIO{in: f, out: out, getenv: getenv, lines: make(chan string), eof: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 4096), 64<<10)
		for sc.Scan() {
			t.lines <- sc.Text()
		}
		close(t.eof)
	}()
	return t, nil
}

// ask prints prompt and returns the line typed.
func (t *terminalIO) ask(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(t.out, prompt)
	select {
	case l := <-t.lines:
		return strings.TrimSpace(l), nil
	case <-t.eof:
		return "", errors.New("the terminal closed before an answer")
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// reviewPlan shows the plan and lets the person accept it, edit it in $EDITOR as YAML, drop or add
// sub-questions, or quit; dir is the run folder, where an edit's file is kept.
func (t *terminalIO) reviewPlan(ctx context.Context, dir string, p *research.Plan) (*research.Plan, error) {
	for {
		t.showPlan(p)
		a, err := t.ask(ctx, "Research this plan? [Enter] accept · e edit in $EDITOR · d N drop sub-question N · + TEXT add one · q quit: ")
		if err != nil {
			return nil, err
		}
		switch {
		case a == "" || a == "a" || a == "y" || a == "yes":
			return p, nil
		case a == "q" || a == "quit":
			return nil, errReviewQuit
		case a == "e" || a == "edit":
			edited, err := t.edit(ctx, dir, p)
			if err != nil {
				return nil, err
			}
			if edited != nil {
				p = edited
			}
		case strings.HasPrefix(a, "d ") || strings.HasPrefix(a, "drop "):
			_, arg, _ := strings.Cut(a, " ")
			n, err := strconv.Atoi(strings.TrimSpace(arg))
			switch {
			case err != nil || n < 1 || n > len(p.SubQuestions):
				fmt.Fprintf(t.out, "There is no sub-question %q: give a number from 1 to %d.\n", strings.TrimSpace(arg), len(p.SubQuestions))
			case len(p.SubQuestions) == 1:
				fmt.Fprintln(t.out, "That is the last sub-question: a plan needs one (q quits).")
			default:
				cp := *p
				cp.SubQuestions = append(append([]research.SubQuestion(nil), p.SubQuestions[:n-1]...), p.SubQuestions[n:]...)
				p = &cp
			}
		case strings.HasPrefix(a, "+"):
			q := strings.TrimSpace(strings.TrimPrefix(a, "+"))
			switch err := research.CheckQuestion(q); {
			case err != nil:
				fmt.Fprintf(t.out, "Not added: %v\n", err)
			case len(p.SubQuestions) >= research.MaxSubQuestions:
				fmt.Fprintf(t.out, "Not added: a plan has at most %d sub-questions (d N drops one).\n", research.MaxSubQuestions)
			default:
				cp := *p
				cp.SubQuestions = append(append([]research.SubQuestion(nil), p.SubQuestions...), research.SubQuestion{Question: q})
				p = &cp
			}
		default:
			fmt.Fprintf(t.out, "Unknown answer %q.\n", termsafe.Line(a))
		}
	}
}

func (t *terminalIO) showPlan(p *research.Plan) {
	var b strings.Builder
	depth := ""
	if p.Depth != "" {
		depth = fmt.Sprintf(" · depth %s (%s)", p.Depth, p.DepthReason)
	}
	fmt.Fprintf(&b, "\nThe plan for %q%s:\n", p.Question, depth)
	for i, sq := range p.SubQuestions {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, sq.Question)
		if len(sq.Queries) > 0 {
			fmt.Fprintf(&b, "     queries: %s\n", strings.Join(sq.Queries, " | "))
		}
		if sq.Criteria != "" {
			fmt.Fprintf(&b, "     criteria: %s\n", sq.Criteria)
		}
	}
	fmt.Fprint(t.out, termsafe.Text(b.String()))
}

// edit opens the plan in the person's editor and reads it back. A failed edit — the editor exits with an error,
// the file is not a plan — keeps the file and says where it is; the person edits again, keeps the plan as it
// was (nil, nil) or quits.
func (t *terminalIO) edit(ctx context.Context, dir string, p *research.Plan) (*research.Plan, error) {
	path := filepath.Join(dir, editFile)
	if _, err := os.Stat(path); err != nil { // a file left by a failed edit is the person's: never overwritten
		b, err := research.MarshalPlan(p)
		if err != nil {
			return nil, err
		}
		if err := runfolder.WriteFile(dir, editFile, b); err != nil {
			return nil, fmt.Errorf("plan review: %w", err)
		}
	}
	for {
		editor := t.getenv("VISUAL")
		if editor == "" {
			editor = t.getenv("EDITOR")
		}
		if editor == "" {
			editor = "vi"
		}
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", editor+` "$1"`, "sh", path)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = t.in, t.out, t.out
		runErr := cmd.Run()
		var problem string
		var edited *research.Plan
		if runErr != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			problem = fmt.Sprintf("the editor (%s) failed: %v", editor, runErr)
		} else if b, err := runfolder.ReadFile(dir, editFile, research.MaxPlanBytes); err != nil {
			problem = err.Error()
		} else if edited, err = research.ParsePlan(b); err != nil {
			problem = err.Error()
		}
		if problem == "" {
			edited.Question, edited.Language = p.Question, p.Language
			edited.Depth, edited.DepthReason = p.Depth, p.DepthReason
			_ = os.Remove(path)
			return edited, nil
		}
		fmt.Fprintf(t.out, "%s\nYour edits are kept in %s.\n", termsafe.Line(problem), path)
		a, err := t.ask(ctx, "e edit again · k keep the plan as it was · q quit: ")
		if err != nil {
			return nil, err
		}
		switch a {
		case "e", "":
			continue
		case "k":
			return nil, nil
		default:
			return nil, fmt.Errorf("%w (your edits are kept in %s)", errReviewQuit, path)
		}
	}
}

// answer puts the planner's clarifying questions to the person, one at a time; an empty line leaves one open.
func (t *terminalIO) answer(ctx context.Context, questions []string) ([]string, error) {
	fmt.Fprintf(t.out, "\nBefore planning, %d question(s) about what you mean (Enter leaves one open):\n", len(questions))
	answers := make([]string, len(questions))
	for i, q := range questions {
		a, err := t.ask(ctx, fmt.Sprintf("  %d. %s\n     > ", i+1, termsafe.Line(q)))
		if err != nil {
			return nil, err
		}
		answers[i] = a
	}
	return answers, nil
}

// loadPlanFile reads a plan file (run --plan FILE): a regular file, opened without blocking (a FIFO named as the
// plan is refused, not waited on), bounded before it is read.
func loadPlanFile(path string) (*research.Plan, error) {
	b, err := runfolder.ReadFile(filepath.Dir(path), filepath.Base(path), research.MaxPlanBytes)
	if err != nil {
		return nil, fmt.Errorf("--plan: %w", err)
	}
	p, err := research.ParsePlan(b)
	if err != nil {
		return nil, fmt.Errorf("--plan %s: %w", path, err)
	}
	return p, nil
}
