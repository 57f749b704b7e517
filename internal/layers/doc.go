// Package layers states deepresearch's import rule as a test: packages are layered (docs/architecture.md,
// section "Layers", whose table a test holds against the one here) and imports only point down the table. A
// package imports packages of its own layer or of lower layers, never of a higher one, and only test files,
// benchmarks and test support import test support. A package missing from the table fails the test, so a new
// package is placed in a layer when it is added. A second test holds the document's "Where to add things" file
// counts against the code.
package layers
