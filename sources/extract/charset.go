package extract

import (
	"bytes"
	"unicode/utf8"

	"github.com/gogs/chardet"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
)

// sniffLimit is how much of a body the charset detector reads.
const sniffLimit = 64 << 10

// mislabelled returns the encoding of a body that is said (or, without a
// declaration, taken) to be UTF-8 but is not: a Shift-JIS page served with
// "charset=utf-8", a GBK text file. Browsers guess from the bytes then, and
// so does this, with a statistical detector of the common legacy encodings
// (Shift-JIS, EUC-JP, EUC-KR, GB18030, Big5, the ISO-8859 family and
// windows-1252, KOI8-R). A body that is UTF-8 but for a few stray bytes or
// a character cut at its end stays UTF-8. nil when it is UTF-8, has a BOM,
// or the detector is unsure.
func mislabelled(body []byte) (encoding.Encoding, string) {
	if bytes.HasPrefix(body, []byte("\xef\xbb\xbf")) || mostlyUTF8(body) {
		return nil, ""
	}
	det := chardet.NewHtmlDetector() // tags and their attributes are not text to judge by
	r, err := det.DetectBest(body[:min(len(body), sniffLimit)])
	if err != nil || r.Confidence < 10 {
		return nil, ""
	}
	enc, name := charset.Lookup(r.Charset) // ISO-8859-1 is read as windows-1252, as browsers do
	if enc == nil || name == "utf-8" {
		return nil, ""
	}
	return enc, name
}

// mostlyUTF8 reports whether the start of body is UTF-8 but for at most
// one invalid sequence in a hundred multi-byte characters (a stray byte in
// a long page, a character cut at the end of what was read).
func mostlyUTF8(body []byte) bool {
	b := body[:min(len(body), sniffLimit)]
	valid, invalid := 0, 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, w := utf8.DecodeRune(b[i:])
		switch {
		case r != utf8.RuneError || w > 1:
			valid++
		case len(b)-i < utf8.UTFMax && !utf8.FullRune(b[i:]):
			// a character cut at the end
		default:
			invalid++
		}
		i += w
	}
	return invalid == 0 || invalid*100 <= valid
}
