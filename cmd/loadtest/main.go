// Command loadtest runs the dashboard's load test (`make loadtest`): a
// server on a loopback port and, by default, 100 clients that each start a
// small run and follow its stream, some disconnecting mid-stream and some
// cancelling, while one client trickles a large import, two read a hostile
// stored run and a run is deleted while it downloads; then (as root) the
// same again with the run store on a small file system that fills. It
// prints the reports and exits 1 when a check failed.
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
	mem := flag.Int64("mem", 512, "the server's memory budget in MiB (its -mem); the process's peak RSS must stay under it")
	importRecords := flag.Int("import-records", 100_000, "records of the bundle one client trickles in (-1: none)")
	trickle := flag.Int("trickle-rate", 4<<20, "bytes per second of the trickled import")
	hostile := flag.Int("hostile-viewers", 2, "clients reading a hostile stored run as its page would (-1: none)")
	cut := flag.Int("cut-records", 200_000, "records of a run deleted while it downloads (-1: none)")
	disk := flag.Int64("disk-size", 32, "MiB of the small file system of a second round whose disk fills (as root; 0: no second round)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := loadtest.Config{Clients: *clients, Iters: *iters, Timeout: *timeout, Mem: *mem << 20,
		ImportRecords: *importRecords, TrickleRate: *trickle, HostileViewers: *hostile, CutRecords: *cut}
	rounds := []loadtest.Config{c}
	if *disk > 0 {
		c.DiskSize = *disk << 20
		rounds = append(rounds, c)
	}
	ok := true
	for i, rc := range rounds {
		if len(rounds) > 1 {
			what := "the store on the temporary directory's disk"
			if rc.DiskSize > 0 {
				what = fmt.Sprintf("the store on a %d MiB file system that fills", rc.DiskSize>>20)
			}
			fmt.Printf("== round %d of %d: %s\n", i+1, len(rounds), what)
		}
		rep, err := loadtest.Run(ctx, rc)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadtest:", err)
			os.Exit(1)
		}
		fmt.Print(rep)
		ok = ok && rep.OK()
	}
	if !ok {
		os.Exit(1)
	}
}
