// Command temporal-dev runs an in-process Temporal server (go.temporal.io/server's temporaltest: SQLite in memory,
// one namespace) for the scale-out tests and `bench scale`. It prints "HOST:PORT NAMESPACE" on one line once the
// frontend accepts clients and runs until SIGINT/SIGTERM or until its standard input closes.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.temporal.io/server/temporaltest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ts := temporaltest.NewServer()
	defer ts.Stop()
	// Wait until the frontend answers before telling anyone where it is.
	c := ts.GetDefaultClient()
	if _, err := c.CheckHealth(ctx, nil); err != nil {
		fmt.Fprintln(os.Stderr, "temporal-dev: health check:", err)
		os.Exit(1)
	}
	fmt.Printf("%s %s\n", ts.GetFrontendHostPort(), ts.GetDefaultNamespace())
	if len(os.Args) > 1 && os.Args[1] == "-stdin" {
		go func() { _, _ = io.Copy(io.Discard, os.Stdin); stop() }()
	}
	<-ctx.Done()
}
