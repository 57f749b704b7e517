package cli

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/config"
)

// probeBodyLimit bounds what probe reads of an answer (and shows of a failed one).
const probeBodyLimit = 512

// newProbeCmd is the container image's health check: the image has no shell and no curl.
func newProbeCmd(app *App) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "probe URL",
		Short: "Check a local HTTP endpoint (a container's health check): exit 0 when it answers 2xx",
		Long: `probe sends GET to an http:// URL on a loopback address and exits 0 when the answer is 2xx, 1 otherwise,
saying why. It is the health check of the container image, which has no shell and no curl: a worker's /readyz
(worker --metrics), the viewer's pages. $DEEPRESEARCH_TOKEN, when set, is sent as a bearer token (the viewer's
access token). Only loopback addresses are probed, and redirects are not followed.`,
		Example: `  deepresearch probe http://127.0.0.1:9090/readyz
  deepresearch probe http://127.0.0.1:8787/static/app.css`,
		Args:        cobra.ExactArgs(1),
		Annotations: map[string]string{annotationInspect: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := probeURL(args[0])
			if err != nil {
				return usageError(err)
			}
			if timeout <= 0 {
				return usageError(fmt.Errorf("--timeout %s: must be positive", timeout))
			}
			req, err := http.NewRequestWithContext(cmd.Context(), http.MethodGet, u.String(), nil)
			if err != nil {
				return usageError(err)
			}
			if tok := app.getenv(config.TokenEnv); tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			c := &http.Client{
				Timeout: timeout,
				// No proxy from the environment: the probe is of this host.
				Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			}
			resp, err := c.Do(req)
			if err != nil {
				return fmt.Errorf("probe %s: %w", u.Redacted(), err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, probeBodyLimit))
			if resp.StatusCode < 200 || resp.StatusCode > 299 {
				msg := strings.TrimSpace(string(body))
				if msg != "" {
					msg = ": " + msg
				}
				return fmt.Errorf("probe %s answered %s%s", u.Redacted(), resp.Status, msg)
			}
			fmt.Fprintf(app.Stdout, "%s answered %s\n", u.Redacted(), resp.Status)
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	return cmd
}

// probeURL accepts an http:// URL whose host is a loopback address (or localhost).
func probeURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("probe %q: %w", s, err)
	}
	if u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("probe %q: want an http:// URL of this host (http://127.0.0.1:PORT/PATH)", s)
	}
	if u.User != nil {
		return nil, errors.New("probe: credentials in the URL are not sent; the viewer's token comes from $" + config.TokenEnv)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("probe %s: only loopback addresses are probed (127.0.0.1, [::1], localhost), not %s", u.Redacted(), host)
	}
	return u, nil
}
