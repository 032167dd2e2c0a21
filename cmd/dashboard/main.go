// Command dashboard is fwlab's single binary: `dashboard` or `dashboard serve`
// starts the web dashboard; `dashboard solve` runs a solver headless and
// writes its records as JSON Lines or CSV; `dashboard import` loads bundles
// into the run store; `dashboard verify` re-runs runs and compares them.
package main

import (
	"fmt"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run dispatches to the subcommand and returns the process exit code
// (0 success, 1 failure, 2 usage error).
func run(args []string) int {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return runServe(args, os.Stdout, os.Stderr)
	case "solve":
		return runSolve(args, os.Stdout, os.Stderr)
	case "import":
		return runImport(args, os.Stdin, os.Stdout, os.Stderr)
	case "verify":
		return runVerify(args, os.Stdin, os.Stdout, os.Stderr)
	case "store":
		return runStore(args, os.Stdout, os.Stderr)
	case "worker":
		return runWorker(args, os.Stdout, os.Stderr)
	case "submit":
		return runSubmit(args, os.Stdin, os.Stdout, os.Stderr)
	case "cancel":
		return runCancel(args, os.Stdout, os.Stderr)
	case "help":
		usage(os.Stdout)
		return 0
	}
	fmt.Fprintf(os.Stderr, "dashboard: unknown command %q\n", cmd)
	usage(os.Stderr)
	return 2
}

func usage(w *os.File) {
	fmt.Fprint(w, `usage:
  dashboard [serve] [-addr localhost:8080] [-data DIR]   start the web dashboard
  dashboard serve -h                                      list the serve flags (budgets, timeouts, -allow-host)
  dashboard solve -problem NAME [flags]                   run a solver headless
  dashboard solve -h                                      list the solve flags
  dashboard import [-db PATH] FILE|DIR…                   load run bundles (or a solve -sweep DIR) into the run store
  dashboard verify BUNDLE… | -db PATH ID… | -db PATH -sweep ID
                                                          re-run runs here and compare every record (-h: details)
  dashboard verify -digest-only BUNDLE…                   check bundles' digests without re-running
  dashboard store check PATH                              check a run store's file for damage
  dashboard store salvage PATH NEW                        copy what can be read of a damaged store into NEW
  dashboard store data postgres://…                       the data files a PostgreSQL store keeps for runs (reclaim: remove unused ones)
  dashboard worker -db postgres://… [-slots N] [-name N]  run queued runs from a PostgreSQL run store
  dashboard submit -db postgres://… [-sweep] FILE         queue a run spec (or a sweep) for the workers
  dashboard cancel -db postgres://… ID…                   cancel queued or running runs (or sweeps)
`)
}
