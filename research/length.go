package research

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Report lengths, the values of Config.Length besides a word target ("800"). Empty leaves the length to the
// synthesizer.
const (
	LengthBrief    = "brief"
	LengthStandard = "standard"
	LengthLong     = "long"
)

// Bounds of a word target and of the person's instructions.
const (
	MinLengthWords      = 50
	MaxLengthWords      = 20_000
	MaxInstructionRunes = 2000
)

var lengthWords = map[string]int{LengthBrief: 250, LengthStandard: 700, LengthLong: 1800}

// LengthWords is the word target of a length: brief, standard and long are about 250, 700 and 1,800 words; a
// number is itself; "" is 0 (no target).
func LengthWords(length string) (int, error) {
	length = strings.TrimSpace(strings.ToLower(length))
	if length == "" {
		return 0, nil
	}
	if n, ok := lengthWords[length]; ok {
		return n, nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSuffix(length, "words"), " "))
	if err != nil {
		return 0, fmt.Errorf("%w: length %q: give brief, standard, long or a number of words (%d to %d)", ErrBadInput, length, MinLengthWords, MaxLengthWords)
	}
	if n < MinLengthWords || n > MaxLengthWords {
		return 0, fmt.Errorf("%w: length %d words: give %d to %d", ErrBadInput, n, MinLengthWords, MaxLengthWords)
	}
	return n, nil
}

// CheckLength refuses a length LengthWords does not understand.
func CheckLength(length string) error {
	_, err := LengthWords(length)
	return err
}

// CheckInstructions refuses instructions longer than MaxInstructionRunes, or holding control characters or
// invalid UTF-8: they go into every planner and synthesizer prompt.
func CheckInstructions(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: the instructions are not valid UTF-8 text", ErrBadInput)
	}
	if n := utf8.RuneCountInString(s); n > MaxInstructionRunes {
		return fmt.Errorf("%w: the instructions have %d characters; the limit is %d", ErrBadInput, n, MaxInstructionRunes)
	}
	for i, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' {
			return fmt.Errorf("%w: the instructions hold the control character U+%04X at byte %d", ErrBadInput, r, i)
		}
	}
	return nil
}

// CountWords counts the words of a report body: runs of letters or digits in scripts with spaces, and each
// Han, Hiragana, Katakana or Hangul character (about a word's worth of meaning) in those without.
func CountWords(s string) int {
	n, in := 0, false
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			n++
			in = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !in {
				n++
			}
			in = true
		default:
			in = false
		}
	}
	return n
}
