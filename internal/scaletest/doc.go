// Package scaletest holds the multi-process scale-out test: a Temporal server, PostgreSQL, several
// `deepresearch worker` processes and concurrent runs. It is its own module so that the main module does not take
// go.temporal.io/server's dependency tree.
package scaletest
