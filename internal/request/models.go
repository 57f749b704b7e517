package request

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/providers"
)

// ErrNoModel is returned for a role when the configuration names no model.
var ErrNoModel = errors.New("no model configured")

// Models builds the models the configuration names: the adapter of the provider's protocol (the provider table
// of Config), the key from the provider's own environment variable, the catalogue's facts corrected by the
// configuration's models: entries, retries, and a meter into a ledger. It is the one place a configured model is
// built: the research roles, ask, chat, subagents and `models --probe` all get theirs here. It is safe for
// concurrent use.
type Models struct {
	// Config is the effective configuration. Required.
	Config *config.Config
	// Warn receives, once per model, what a model the catalogue does not know means; nil discards it.
	Warn io.Writer

	warned sync.Map
}

// ForRole builds the model of a role on the tier the configuration assigns it, metered into ledger under the
// role's name; ErrNoModel when none is configured. Its signature is a ModelFunc.
func (m *Models) ForRole(role string, ledger *llm.Ledger) (llm.Model, error) {
	spec := m.Config.ModelFor(role)
	if spec.Provider == "" || spec.Model == "" {
		return nil, ErrNoModel
	}
	model, err := m.FromSpec(spec, ledger, role)
	if err != nil {
		return nil, fmt.Errorf("model for %s: %w", role, err)
	}
	return model, nil
}

// ForTier builds the model a tier names of its own (for a subagent type's tier), metered under label; nil and no
// error when the configuration names no model for the tier, meaning the caller's own model.
func (m *Models) ForTier(tier string, ledger *llm.Ledger, label string) (llm.Model, error) {
	if m.Config.Tiers[tier].Model == "" {
		return nil, nil
	}
	model, err := m.FromSpec(m.Config.ModelForTier(tier), ledger, label)
	if err != nil {
		return nil, fmt.Errorf("model for tier %s: %w", tier, err)
	}
	return model, nil
}

// FromSpec builds a retrying model, metered into ledger (when non-nil) under label.
func (m *Models) FromSpec(spec config.ModelSpec, ledger *llm.Ledger, label string) (llm.Model, error) {
	cfg := m.Config
	key, keyEnv := cfg.APIKey(spec), cfg.KeyVar(spec)
	if key == "" && spec.BaseURL == "" && keyEnv != "" {
		// A hosted service's default endpoint always wants a key; failing here beats an opaque 401 (or, offline,
		// a DNS error) from the first model call.
		return nil, fmt.Errorf("%s model %s: no API key: set %s (keys are read only from the environment), or pass --base-url for a local server",
			spec.Provider, spec.Model, keyEnv)
	}
	ps := providers.Spec{
		Provider: spec.Provider, Model: spec.Model, BaseURL: spec.BaseURL, APIKey: key,
		Retry:    llm.RetryConfig{MaxAttempts: cfg.Retry.MaxAttempts, CallTimeout: cfg.Retry.CallTimeout},
		Override: cfg.Override(spec.Model),
	}
	model, err := cfg.Providers.New(ps)
	if err != nil {
		return nil, err
	}
	m.warnUnknown(spec)
	if ledger != nil {
		model = llm.Metered(model, ledger, label)
	}
	return model, nil
}

// warnUnknown says once per model what an unknown model name means: no context window and no prices, so context
// management guesses and the cost fuse cannot trip; and how to declare the model.
func (m *Models) warnUnknown(spec config.ModelSpec) {
	if _, declared := m.Config.Models[spec.Model]; declared || m.Config.Describe(spec).Known || m.Warn == nil {
		return
	}
	if _, dup := m.warned.LoadOrStore(spec.Provider+"/"+spec.Model, true); dup {
		return
	}
	fmt.Fprintf(m.Warn, "warning: model %q is not in the built-in catalogue: its context window and prices are unknown, so "+
		"the context manager assumes 32,000 tokens and spend counts as $0 (--max-cost cannot trip). Declare it in the config file:\n"+
		"  models:\n    %s: {context_window: 32768, input_price: 0, output_price: 0}   # prices in USD per million tokens\n",
		spec.Model, spec.Model)
}
