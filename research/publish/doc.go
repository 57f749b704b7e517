// Package publish is the publication check: what of a synthesizer's draft may be published. It splits a draft
// into units (sentences, list items, table rows, code blocks), reads and canonicalises its citation markers
// ([e3]), checks each unit against the evidence it cites — through an EvidenceCheck, one function the caller
// answers for its pool — and against the quotes' words (the support check), prunes what fails with a cause, and
// renumbers what stays. It also holds quote normalisation and grounding (a quote verbatim in the text it came
// from), line anchors over plain text (a quote on the lines its #Lx-Ly names), and the refusal of text that
// addresses the reader or the model. It works on plain strings and imports nothing of the research graph, which
// uses it (research/synth.go, research/read.go); the model and extractive roles use it for the same rules.
package publish
