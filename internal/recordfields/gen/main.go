// Command gen writes what follows from the declared record fields:
// the table of fields in the compatibility policy (docs/compatibility.md)
// and package fw's Record.AppendJSON (fw/recordjson_gen.go). Run as
// `go generate ./internal/recordfields`, with the module's root as its
// argument.
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
