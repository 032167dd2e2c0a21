// Command gendoc writes the declared record fields into the compatibility
// policy (docs/compatibility.md): `go generate ./internal/recordfields`.
package main

import (
	"fmt"
	"os"

	"github.com/fwlab/fwlab/internal/recordfields"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gendoc FILE.md")
		os.Exit(2)
	}
	doc, err := os.ReadFile(os.Args[1])
	if err == nil {
		var out string
		if out, err = recordfields.ReplaceDoc(string(doc)); err == nil {
			err = os.WriteFile(os.Args[1], []byte(out), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}
