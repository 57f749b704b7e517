//go:build race

package fetch

// allocFactor scales allocation bounds: under the race detector the same reading allocates about twice the bytes
// (measured: the zip bomb's 74 MiB are 148 MiB with -race).
const allocFactor = 2
