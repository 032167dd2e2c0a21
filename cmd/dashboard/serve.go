package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/ssvm"
)

// runServe starts the web dashboard and serves until SIGINT or SIGTERM.
func runServe(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, stdout, stderr)
}

// serve runs the dashboard until ctx ends, then shuts down gracefully: the
// runs are cancelled, the websockets closed (code 1001) and the requests in
// flight given a few seconds to finish.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dashboard serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "localhost:8080", "address to listen on (host:port; port 0 picks a free one)")
	data := fs.String("data", "", "directory of data sets; data-file parameters are looked up in it and may not leave it (empty: paths are used as given)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: dashboard [serve] [-addr localhost:8080] [-data DIR]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "dashboard serve: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if *data != "" {
		st, err := os.Stat(*data)
		if err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "dashboard serve: -data %q must be a readable directory\n", *data)
			return 2
		}
		// The OCR scenario finds its data set under the data directory
		// unless the environment names another place.
		if os.Getenv(ssvm.EnvOCR) == "" {
			if st, err := os.Stat(filepath.Join(*data, "ocr")); err == nil && st.IsDir() {
				_ = os.Setenv(ssvm.EnvOCR, filepath.Join(*data, "ocr"))
			}
		}
	}

	srv, err := server.New(server.Options{DataDir: *data})
	if err != nil {
		fmt.Fprintf(stderr, "dashboard serve: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard serve: -addr %s: %v\n", *addr, err)
		_ = srv.Close()
		return 1
	}
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	fmt.Fprintf(stdout, "fwlab dashboard at %s (%d problems, %d presets; Ctrl-C stops)\n",
		dashboardURL(*addr, ln.Addr()), len(scenarios.All()), len(scenarios.Presets()))

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		_ = srv.Close()
		fmt.Fprintf(stderr, "dashboard serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "shutting down")
	code := 0
	if err := srv.Close(); err != nil {
		fmt.Fprintf(stderr, "dashboard serve: %v\n", err)
		code = 1
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		fmt.Fprintf(stderr, "dashboard serve: shutdown: %v\n", err)
		_ = hs.Close()
		code = 1
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "dashboard serve: %v\n", err)
		code = 1
	}
	return code
}

// dashboardURL is the address to print: the host the user asked for (or
// localhost when none) with the port actually bound.
func dashboardURL(addr string, bound net.Addr) string {
	host, _, err := net.SplitHostPort(addr)
	_, port, err2 := net.SplitHostPort(bound.String())
	if err != nil || err2 != nil {
		return "http://" + bound.String() + "/"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}
