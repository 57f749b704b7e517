package research

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Input bounds shared by every surface (CLI, web viewer, MCP tool, library): a question or a limit that one
// surface refuses, all refuse, with the same message.
const (
	// MaxQuestionRunes is the longest research question accepted, in characters.
	MaxQuestionRunes = 4000
	// MaxTimeLimit is the longest wall-time limit accepted for one run.
	MaxTimeLimit = 7 * 24 * time.Hour
	// MaxCostLimit is the largest cost fuse accepted, in US dollars.
	MaxCostLimit = 1e6
	// MaxRounds is the most extra directed re-search rounds one run may ask for: each round re-runs search, read
	// and verify, so more than this spends without adding what the verifier can still find.
	MaxRounds = 10
)

// ErrBadInput marks a question or a limit refused by CheckQuestion or Budget.Validate.
var ErrBadInput = errors.New("invalid input")

// CheckQuestion refuses a question no run could research — empty, with no letter or digit in any script (only
// emoji, punctuation or zero-width characters), holding a control character (NUL, ESC, …; newline and tab are
// text) or invalid UTF-8 — and one longer than MaxQuestionRunes characters. Every surface calls it before a
// run folder is created, so a refused question leaves nothing behind.
func CheckQuestion(q string) error {
	q = strings.TrimSpace(q)
	if q == "" {
		return fmt.Errorf("%w: the question is empty", ErrBadInput)
	}
	if !utf8.ValidString(q) {
		return fmt.Errorf("%w: the question is not valid UTF-8 text", ErrBadInput)
	}
	if n := utf8.RuneCountInString(q); n > MaxQuestionRunes {
		return fmt.Errorf("%w: the question has %d characters; the limit is %d (put long material in a corpus folder instead)", ErrBadInput, n, MaxQuestionRunes)
	}
	words := false
	for i, r := range q {
		if unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' {
			return fmt.Errorf("%w: the question holds the control character U+%04X at byte %d; remove it", ErrBadInput, r, i)
		}
		words = words || unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	if !words {
		return fmt.Errorf("%w: the question has no letter or digit; ask it in words", ErrBadInput)
	}
	return nil
}

// CheckRounds refuses more than MaxRounds extra rounds (negative means none, 0 the default).
func CheckRounds(n int) error {
	if n > MaxRounds {
		return fmt.Errorf("%w: %d extra rounds; the limit is %d", ErrBadInput, n, MaxRounds)
	}
	return nil
}

// Validate refuses limits that cannot mean anything: negative, not-a-number or infinite values, and values above
// the documented maxima. Zero keeps each field's documented meaning (no fuse, or the default).
func (b Budget) Validate() error {
	var errs []error
	if err := CheckCost(b.MaxCostUSD); err != nil {
		errs = append(errs, err)
	}
	if b.MaxTokens < 0 {
		errs = append(errs, fmt.Errorf("%w: the token fuse %d is negative (0 means no token fuse)", ErrBadInput, b.MaxTokens))
	}
	if err := CheckTime(b.MaxTime); err != nil {
		errs = append(errs, err)
	}
	if b.StageTimeout < 0 {
		errs = append(errs, fmt.Errorf("%w: the stage timeout %s is negative (0 means the default)", ErrBadInput, b.StageTimeout))
	}
	if b.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("%w: concurrency %d is negative (0 means the default)", ErrBadInput, b.Concurrency))
	}
	if b.MaxCalls < 0 {
		errs = append(errs, fmt.Errorf("%w: the call cap %d is negative (0 means the default)", ErrBadInput, b.MaxCalls))
	}
	return errors.Join(errs...)
}

// CheckCost refuses a cost fuse that is negative, not a number, infinite or above MaxCostLimit; 0 means no cost
// fuse.
func CheckCost(usd float64) error {
	if math.IsNaN(usd) || math.IsInf(usd, 0) || usd < 0 || usd > MaxCostLimit {
		return fmt.Errorf("%w: the cost limit %v is not a number of US dollars between 0 and %g (0 means no cost fuse)", ErrBadInput, usd, MaxCostLimit)
	}
	return nil
}

// CheckTime refuses a time limit that is negative or above MaxTimeLimit; 0 means no time limit.
func CheckTime(d time.Duration) error {
	if d < 0 || d > MaxTimeLimit {
		return fmt.Errorf("%w: the time limit %s is not between 0 and %s (0 means no time limit)", ErrBadInput, d, MaxTimeLimit)
	}
	return nil
}

// Minutes converts a time limit given in minutes (the web form and the MCP tool take minutes) to a duration,
// refusing what CheckTime refuses as well as not-a-number and infinite values, before any conversion can
// overflow.
func Minutes(m float64) (time.Duration, error) {
	if math.IsNaN(m) || math.IsInf(m, 0) || m < 0 || m > MaxTimeLimit.Minutes() {
		return 0, fmt.Errorf("%w: the time limit of %v minutes is not between 0 and %g (0 means no time limit)", ErrBadInput, m, MaxTimeLimit.Minutes())
	}
	return time.Duration(m * float64(time.Minute)), nil
}
