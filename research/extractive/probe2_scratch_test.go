package extractive

import (
	"testing"

	"deepresearch/textrank"
)

func TestScratchProbe2(t *testing.T) {
	s := "## type Builder\n\nA Builder is used to efficiently build a string using [Builder.Write](#Builder.Write) methods. It minimizes memory copying. The zero value is ready to use. Do not copy a non-zero Builder.\n\n## func (Builder) Cap\n"
	for _, p := range textrank.Passages(s, 320) {
		plain := plainText(p.Text)
		t.Logf("%q usable=%v", p.Text, usable(p.Text, plain, textrank.Tokenize(plain)))
	}
}
