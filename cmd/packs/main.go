// Command packs installs, validates and runs capability packs. main is
// thin: it hands the arguments and standard streams to run, which tests
// call in-process.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	tuneGC(os.Args[1:], os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
