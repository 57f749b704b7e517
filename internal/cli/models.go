package cli

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/catalog"
	"github.com/deepresearch/deepresearch/llm/providers"
)

// modelRow is one configured tier with its catalogue facts.
type modelRow struct {
	Tier    string        `json:"tier"`
	Roles   []string      `json:"roles"`
	BaseURL string        `json:"base_url,omitempty"`
	Entry   catalog.Entry `json:"model"`
	// Probe is what one short request to the tier's server showed (--probe).
	Probe *probeResult `json:"probe,omitempty"`
	spec  config.ModelSpec
}

// probeResult is what a tier's server answered one short request with.
type probeResult struct {
	// UsageReported is false when the server sent no usage: the ledger, the fuses and the report then count the
	// tier's tokens here, marked estimated.
	UsageReported bool   `json:"usage_reported"`
	InputTokens   int    `json:"input_tokens"`
	OutputTokens  int    `json:"output_tokens"`
	Reasoning     bool   `json:"reasoning"`
	Error         string `json:"error,omitempty"`
}

// probe sends each row's model one short request.
func (a *App) probe(ctx context.Context, rows []modelRow) {
	for i := range rows {
		p := &probeResult{}
		rows[i].Probe = p
		m, err := a.models().FromSpec(rows[i].spec, nil, rows[i].Tier)
		if err == nil {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			var resp *llm.Response
			resp, err = m.Generate(pctx, &llm.Request{MaxTokens: 256, Messages: []llm.Message{
				{Role: llm.RoleUser, Content: "Reply with the single word: ready"}}})
			cancel()
			if err == nil {
				p.UsageReported = !resp.Usage.Estimated
				p.InputTokens, p.OutputTokens = resp.Usage.PromptTokens(), resp.Usage.OutputTokens
				p.Reasoning = len(resp.Message.Reasoning) > 0
			}
		}
		if err != nil {
			p.Error = err.Error()
		}
	}
}

// probeLine says what a probe showed, for the table's notes.
func probeLine(r modelRow) string {
	p := r.Probe
	switch {
	case p.Error != "":
		return fmt.Sprintf("%s (%s): the probe failed: %s", r.Tier, r.Entry.Name, p.Error)
	case p.UsageReported:
		s := fmt.Sprintf("%s (%s): the server reports usage (%d in, %d out)", r.Tier, r.Entry.Name, p.InputTokens, p.OutputTokens)
		if p.Reasoning {
			s += "; reasoning kept apart from answers"
		}
		return s
	default:
		s := fmt.Sprintf("%s (%s): the server reports no usage: tokens and cost for this tier are counted here and marked estimated (this probe: about %d in, %d out)", r.Tier, r.Entry.Name, p.InputTokens, p.OutputTokens)
		if p.Reasoning {
			s += "; reasoning kept apart from answers"
		}
		return s
	}
}

func newModelsCmd(app *App) *cobra.Command {
	var asJSON, probe, listProviders bool
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the configured models per tier with context window and prices",
		Long: `models shows which model serves each tier (strong, mid, fast) and which roles use it, with the context
window, the default answer length and the USD prices per million tokens from the offline model catalogue.
Models the catalogue does not know (local ones) show the default window and a price of zero; set
models.<name>.context_window and prices in the configuration file to correct them. --probe sends each tier's
model one short request and says whether its server reports usage: many local servers and proxies do not, and
then the fuses and the report count that tier's tokens locally and say the figures are estimated.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listProviders {
				if asJSON {
					return writeJSON(app.Stdout, app.Config.Providers.Rows())
				}
				return app.printProviders()
			}
			rows := app.modelRows()
			if probe {
				app.probe(cmd.Context(), rows)
			}
			if asJSON {
				return writeJSON(app.Stdout, rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(app.Stdout, "no model configured: pass --provider and --model (and --base-url for a local server), or set them in the config file.")
				fmt.Fprintln(app.Stdout, "Without a model, research runs on the extractive engine.")
				fmt.Fprintln(app.Stdout)
				return app.printProviders()
			}
			tw := tabwriter.NewWriter(app.Stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIER\tPROVIDER\tMODEL\tCONTEXT\tMAX OUT\tIN $/M\tOUT $/M\tCACHE READ $/M\tCACHE WRITE $/M\tSOURCE\tAS OF\tROLES")
			var notes []string
			for _, r := range rows {
				e := r.Entry
				source := e.Source
				if !e.Known {
					source = "unknown (defaults)"
				}
				asOf := e.AsOf
				if asOf == "" {
					asOf = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Tier, e.Provider, e.Name, e.ContextWindow,
					e.MaxOutput, price(e.Price.Input), price(e.Price.Output), price(e.Price.CacheRead),
					price(e.Price.CacheWrite), source, asOf, joinRoles(r.Roles))
				if e.Reference != "" {
					n := fmt.Sprintf("%s: figures from %s", e.Name, e.Reference)
					if e.Note != "" {
						n += " (" + e.Note + ")"
					}
					if !slices.Contains(notes, n) {
						notes = append(notes, n)
					}
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, n := range notes {
				fmt.Fprintln(app.Stdout, n)
			}
			for _, r := range rows {
				if r.Probe != nil {
					fmt.Fprintln(app.Stdout, probeLine(r))
				}
			}
			fmt.Fprintln(app.Stdout, "Correct any figure under models.<name> in the configuration file (context_window, max_output, input_price, output_price).")
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&listProviders, "providers", false, "list the model providers --provider accepts: protocol, key variable, default endpoint, suggested models per tier")
	cmd.Flags().BoolVar(&probe, "probe", false, "send each tier's model one short request and say whether its server reports usage (when it does not, tokens and cost are counted here and marked estimated)")
	return cmd
}

// modelRows resolves every tier that some role uses, plus tiers configured explicitly.
func (a *App) modelRows() []modelRow {
	cfg := a.Config
	rolesByTier := map[string][]string{}
	for role, tier := range cfg.Roles {
		rolesByTier[tier] = append(rolesByTier[tier], role)
	}
	tiers := providers.Tiers()
	for t := range cfg.Tiers {
		if !slices.Contains(providers.Tiers(), t) {
			tiers = append(tiers, t)
		}
	}
	var rows []modelRow
	for _, tier := range tiers {
		spec := cfg.Tiers[tier]
		roles := rolesByTier[tier]
		sort.Strings(roles)
		// Resolve through a role when one uses the tier, so that defaults fill in exactly as for a real call.
		if len(roles) > 0 {
			spec = cfg.ModelFor(roles[0])
		} else {
			if spec.Provider == "" {
				spec.Provider = cfg.Default.Provider
			}
			if spec.Model == "" {
				spec.Model = cfg.Default.Model
			}
			if spec.BaseURL == "" {
				spec.BaseURL = cfg.Default.BaseURL
			}
		}
		if spec.Provider == "" || spec.Model == "" {
			continue
		}
		e := cfg.Describe(spec)
		rows = append(rows, modelRow{Tier: tier, Roles: roles, BaseURL: spec.BaseURL, Entry: e, spec: spec})
	}
	return rows
}

// printProviders prints the model provider table.
func (a *App) printProviders() error {
	tw := tabwriter.NewWriter(a.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tPROTOCOL\tKEY\tENDPOINT\tSUGGESTED MODELS")
	for _, p := range a.Config.Providers.Rows() {
		endpoint := p.BaseURL
		if endpoint == "" {
			endpoint = "(the service's own)"
		}
		if p.BaseURLEnv != "" {
			endpoint += " or $" + p.BaseURLEnv
		}
		suggested := p.Suggested()
		if suggested == "" {
			suggested = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Protocol, p.Needs(), endpoint, suggested)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(a.Stdout, "Any OpenAI-compatible server is openai with --base-url; a key is read only from its provider's variable (or model.api_key_env).")
	return nil
}

func price(p float64) string {
	if p == 0 {
		return "0"
	}
	return fmt.Sprintf("%.4g", p)
}

func joinRoles(roles []string) string {
	if len(roles) == 0 {
		return "-"
	}
	s := roles[0]
	for _, r := range roles[1:] {
		s += "," + r
	}
	return s
}
