package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// Every command that opens a run store (-db, or a store command's PATH)
// first asks storeKind what the argument names, so that a PostgreSQL URL
// is never opened, or created, as a file (a salvage into
// 'postgres://…' once wrote a SQLite file into a folder tree named after
// the URL).

// storeKind says whether db names a PostgreSQL database (a postgres:// or
// postgresql:// URL) or a SQLite file. A text that looks meant for
// PostgreSQL but is not such a URL (postgres:/… with a slash lost, an
// upper-case scheme, libpq's "host=… dbname=…" form) is refused, naming
// the rule, rather than taken for a file name.
func storeKind(db string) (postgres bool, err error) {
	if pgstore.IsURL(db) {
		return true, nil
	}
	low := strings.ToLower(strings.TrimSpace(db))
	if strings.HasPrefix(low, "postgres:") || strings.HasPrefix(low, "postgresql:") || libpqKeywords.MatchString(low) {
		return false, fmt.Errorf("%q is neither a PostgreSQL URL (postgres://USER@HOST/DB?…, in lower case) nor taken for a file name: write the URL in full", quoteShort(db))
	}
	return false, nil
}

// libpqKeywords matches libpq's key=value connection strings.
var libpqKeywords = regexp.MustCompile(`^(host|hostaddr|dbname|user|port|service|sslmode)\s*=`)

// quoteShort is s cut to a few dozen characters, for messages.
func quoteShort(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// needPostgres checks that db names a PostgreSQL database, for the
// commands that work only on one (worker, submit, cancel, store data).
func needPostgres(db string) error {
	pg, err := storeKind(db)
	switch {
	case err != nil:
		return err
	case !pg:
		return fmt.Errorf("must be a PostgreSQL URL (postgres://…), got %q", quoteShort(db))
	}
	return nil
}

// needFile checks that path names a SQLite file, for the commands that
// work only on one (store check, store salvage); why says what a
// PostgreSQL database offers instead.
func needFile(path, why string) error {
	pg, err := storeKind(path)
	switch {
	case err != nil:
		return err
	case pg:
		return fmt.Errorf("%s is a PostgreSQL database, not a SQLite file: %s", pgstore.Redact(path), why)
	}
	return nil
}

// openRunStore opens the run store -db names: a PostgreSQL database for a
// postgres:// (or postgresql://) URL, otherwise the SQLite file.
func openRunStore(db string) (store.Backend, error) {
	pg, err := storeKind(db)
	if err != nil {
		return nil, err
	}
	if pg {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		st, err := pgstore.Open(ctx, db)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	return store.Open(db)
}
