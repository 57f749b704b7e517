//go:build !race

package fetch

// allocFactor scales allocation bounds (see race_on_test.go).
const allocFactor = 1
