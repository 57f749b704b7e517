// Package research is the research graph: plan, parallel search, read, adversarial verify and synthesize, with
// an evidence pool of verbatim, grounded quotes, a citation map, a research log, a budget with a cost fuse, and
// resume from the last completed step.
//
// The graph is written with small public primitives — Fleet (the fleet bound), FanOut (bounded parallel fan-out
// where one failure never cancels its siblings), Loop (until a verdict or a cap) and Ask (run an agent for a
// role and decode its JSON answer) — so Go users can compose their own research workflows; see examples/.
//
// Two sets of role implementations run the same graph: research/llmroles (language models) and
// research/extractive (no model).
package research
