// Command gen writes what follows from the declared record fields:
// the table of fields in the compatibility policy (docs/compatibility.md),
// package fw's Record.AppendJSON (fw/recordjson_gen.go) and fw/live's
// queued record (fw/live/record_gen.go). Run as
// `go generate ./internal/recordfields`, with the module's root as its
// argument. Built with -tags recordfields_extra it writes only fw/live's
// file of that test build (fw/live/record_extra_gen.go).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fwlab/fwlab/internal/recordfields"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen MODULE-ROOT")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	live, err := recordfields.LiveRecord()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(recordfields.LiveRecordFile())), live, 0o644); err != nil {
		return err
	}
	if recordfields.ExtraBuild {
		// a test build's table: only fw/live's file of the build; the
		// page and fw's encoder describe the declaration without it
		return nil
	}
	docPath := filepath.Join(root, "docs", "compatibility.md")
	doc, err := os.ReadFile(docPath)
	if err != nil {
		return err
	}
	out, err := recordfields.ReplaceDoc(string(doc))
	if err != nil {
		return err
	}
	if err := os.WriteFile(docPath, []byte(out), 0o644); err != nil {
		return err
	}
	src, err := recordfields.FWRecordJSON()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, filepath.FromSlash(recordfields.FWRecordJSONFile)), src, 0o644)
}
