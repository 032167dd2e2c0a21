// Command loadtest runs the dashboard's load test (`make loadtest`): a
// server on a loopback port and, by default, 100 clients that each start a
// small run and follow its stream, some disconnecting mid-stream and some
// cancelling. It prints the report and exits 1 when a check failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/fwlab/fwlab/internal/loadtest"
)

func main() {
	clients := flag.Int("clients", 100, "clients, each starting one run")
	iters := flag.Int("iters", 5000, "iterations per trace of each run (two traces each)")
	timeout := flag.Duration("timeout", 3*time.Minute, "the whole test stops after this long")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := loadtest.Run(ctx, loadtest.Config{Clients: *clients, Iters: *iters, Timeout: *timeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
	fmt.Print(rep)
	if !rep.OK() {
		os.Exit(1)
	}
}
