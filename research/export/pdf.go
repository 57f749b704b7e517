package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/deepresearch/deepresearch/research"
)

// The PDF is the standalone HTML printed by headless Chromium (or Chrome): the browser lays out any script — the
// Chinese of a Chinese report included, with the system's CJK fonts — and embeds the fonts it used, so the PDF
// reads and extracts as the page does. A pure-Go PDF writer would need a CJK font of its own embedded in the
// binary (10–20 MB) and its own line breaking; printing through the browser adds nothing to the binary, at the cost
// of needing a Chromium on the machine that exports.

// ErrNoChromium is returned by PDF when no Chromium or Chrome can be found.
var ErrNoChromium = errors.New("PDF export prints the report with Chromium or Chrome, and none was found: install one " +
	"(Debian/Ubuntu: apt-get install chromium) or set CHROMIUM to its path; `--format html` needs no browser and prints to PDF from any")

// chromiumNames are the commands tried, in order, when CHROMIUM is not set.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "microsoft-edge"}

// FindChromium returns the browser PDF uses: $CHROMIUM when set, else the first of the usual commands on PATH.
func FindChromium() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("CHROMIUM=%s: %w", p, err)
		}
		return p, nil
	}
	for _, n := range chromiumNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// pdfTimeout bounds one print.
const pdfTimeout = 2 * time.Minute

// maxPDFSize bounds the file read back from the browser.
const maxPDFSize = 256 << 20

// PDF prints the report's standalone HTML to PDF with headless Chromium (chrome: its path; "" finds one).
func PDF(ctx context.Context, rep *research.Report, chrome string) ([]byte, error) {
	if chrome == "" {
		var err error
		if chrome, err = FindChromium(); err != nil {
			return nil, err
		}
	}
	tmp, err := os.MkdirTemp("", "deepresearch-pdf-")
	if err != nil {
		return nil, fmt.Errorf("export: PDF: %w", err)
	}
	defer os.RemoveAll(tmp)
	page := filepath.Join(tmp, "report.html")
	if err := os.WriteFile(page, StandaloneHTML(rep), 0o600); err != nil {
		return nil, fmt.Errorf("export: PDF: %w", err)
	}
	out := filepath.Join(tmp, "report.pdf")
	ctx, cancel := context.WithTimeout(ctx, pdfTimeout)
	defer cancel()
	args := []string{"--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--disable-dev-shm-usage", "--no-pdf-header-footer", "--user-data-dir=" + filepath.Join(tmp, "profile"),
		"--print-to-pdf=" + out}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox") // Chromium refuses to run as root with its sandbox
	}
	args = append(args, (&url.URL{Scheme: "file", Path: filepath.ToSlash(page)}).String())
	cmd := exec.CommandContext(ctx, chrome, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, n: 64 << 10}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("export: PDF: %s did not finish in %s: %w", chrome, pdfTimeout, context.Cause(ctx))
		}
		return nil, fmt.Errorf("export: PDF: %s: %w: %s", chrome, err, lastLine(stderr.String()))
	}
	fi, err := os.Stat(out)
	if err != nil {
		return nil, fmt.Errorf("export: PDF: %s wrote no PDF: %s", chrome, lastLine(stderr.String()))
	}
	if fi.Size() > maxPDFSize {
		return nil, fmt.Errorf("export: PDF: %s wrote %d bytes, more than %d", chrome, fi.Size(), maxPDFSize)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("export: PDF: %w", err)
	}
	if !bytes.HasPrefix(b, []byte("%PDF-")) {
		return nil, fmt.Errorf("export: PDF: %s wrote something that is not a PDF", chrome)
	}
	return b, nil
}

// limitedBuffer keeps the first n bytes written to it and discards the rest.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// lastLine is the last non-empty line of a browser's stderr that is not one of its routine complaints.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.Contains(l, "dbus") && !strings.Contains(l, "bytes written to file") {
			return l
		}
	}
	return "(no message)"
}
