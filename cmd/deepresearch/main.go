// Command deepresearch is the deep-research agent's command line; everything lives in internal/cli and below.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/deepresearch/deepresearch/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
