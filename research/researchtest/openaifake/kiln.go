package openaifake

// The Kestrel kiln is a small invented corpus whose facts no model knows: tests that run the whole graph against
// this fake (the CLI's end-to-end run, the multi-process scale test) write KilnDocs to a folder, ask KilnQuestion
// and start from Kiln's configuration, adding the misbehaviour or latency they test.

// KilnQuestion asks about all three topics of the corpus.
const KilnQuestion = "How does the Kestrel solar kiln work, how fast does it dry timber, and what does it cost?"

// KilnDocs are the corpus files by name. winter.md answers only the verifier's gap.
var KilnDocs = map[string]string{
	"kiln-design.md": "# Kestrel kiln design: absorber, glazing, fans and vent\n\n" +
		"The Kestrel kiln heats its chamber with a black absorber plate behind polycarbonate glazing. " +
		"Two roof fans push the warm air through the timber stack and out through a humidity vent.\n\n" +
		"At night the vent closes so that the boards can even out inside.\n",
	"drying-speed.md": "# Kestrel kiln drying days in the summer trial\n\n" +
		"In the summer trial, oak boards 25 mm thick dried from 60 to 12 percent moisture content in 38 days. " +
		"Pine boards of the same thickness reached 12 percent in 19 days.\n",
	"costs.md": "# Kestrel kiln cost in euros\n\n" +
		"The materials for one Kestrel kiln cost about 2,400 euros in 2024. " +
		"Running the kiln uses roughly 1.1 kilowatt-hours of electricity per day, which costs about 30 cents.\n",
	"winter.md": "# Winter season results: December and January\n\n" +
		"During December and January a batch of oak planks needed 71 days before a moisture meter read 12 percent. " +
		"Low sun angles in December cut chamber temperature by about 15 degrees.\n",
}

// Kiln is the fake's configuration for KilnQuestion: three sub-questions, and a verifier gap on the drying speed
// that only winter.md fills.
func Kiln() Config {
	return Config{
		APIKey: "fake-key",
		SubQuestions: []SubQuestion{
			{Question: "How does the Kestrel solar kiln work?", Queries: []string{"Kestrel solar kiln design", "absorber glazing fans"},
				Keywords: []string{"absorber", "glazing", "fans"}},
			{Question: "How fast does the Kestrel kiln dry timber?", Queries: []string{"Kestrel kiln drying speed", "summer trial boards dried"},
				Keywords: []string{"days"}},
			{Question: "What does a Kestrel kiln cost?", Queries: []string{"Kestrel kiln cost", "materials electricity euros"},
				Keywords: []string{"euros", "cents"}},
		},
		GapSubQuestion: 2,
		GapQueries:     []string{"winter season December January", "oak planks moisture meter"},
	}
}
