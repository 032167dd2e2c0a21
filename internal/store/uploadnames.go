package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fwlab/fwlab/internal/spec"
)

// Upload names: a file uploaded to a server is kept by the SHA-256 of its
// content (internal/datapath's upload:SHA256), and the store keeps the name
// it was sent with, so that every server sharing the store, and a server
// started again, shows a message about the file by the user's name
// (SetUploadName, UploadNames). The same content sent under another name
// takes the newer name.

// MaxUploadName bounds the characters of an upload's name (a file name
// of the usual file systems has at most 255 bytes).
const MaxUploadName = 255

// ShortSum is how many leading hexadecimal digits of a SHA-256 a message
// may quote for an upload ("3fa2c41b0e9d…"); UploadNames finds a name by
// them.
const ShortSum = 12

// CheckUploadName checks the name of an upload as every store keeps it:
// not empty, valid UTF-8, at most MaxUploadName characters, no NUL
// character (the error names field "name").
func CheckUploadName(name string) error {
	if name == "" {
		return spec.Errorf("name", "must name the file (it is empty)")
	}
	return checkText("name", name, MaxUploadName)
}

// checkSum checks a SHA-256 in hexadecimal (64 lowercase digits) or, with
// short, its first ShortSum digits or more.
func checkSum(field, sum string, short bool) error {
	if !isHex(sum) || len(sum) != 64 && (!short || len(sum) < ShortSum || len(sum) > 64) {
		want := "the 64 lowercase hexadecimal digits of a SHA-256"
		if short {
			want = fmt.Sprintf("%d to 64 lowercase hexadecimal digits of a SHA-256", ShortSum)
		}
		return spec.Errorf(field, "must be %s, got %.70q", want, sum)
	}
	return nil
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// CheckUploadKeys checks UploadNames's keys (each a SHA-256 or its first
// ShortSum digits or more; the error names keys[i]) and returns their
// first ShortSum digits, each once, for the store's index.
func CheckUploadKeys(keys []string) ([]string, error) {
	var short []string
	for i, k := range keys {
		if err := checkSum(fmt.Sprintf("keys[%d]", i), k, true); err != nil {
			return nil, err
		}
		if p := k[:ShortSum]; !slices.Contains(short, p) {
			short = append(short, p)
		}
	}
	return short, nil
}

// CheckUploadSum checks the SHA-256 of an upload (field "sha256").
func CheckUploadSum(sum string) error { return checkSum("sha256", sum, false) }

// MatchUploadKeys keeps of the names found (by SHA-256) those whose
// SHA-256 starts with one of keys.
func MatchUploadKeys(found map[string]string, keys []string) map[string]string {
	out := map[string]string{}
	for sum, name := range found {
		for _, k := range keys {
			if strings.HasPrefix(sum, k) {
				out[sum] = name
				break
			}
		}
	}
	return out
}

// SetUploadName keeps name as the name of the upload whose content has
// the SHA-256 sum (replacing the name it had).
func (s *Store) SetUploadName(ctx context.Context, sum, name string) error {
	if err := CheckUploadSum(sum); err != nil {
		return err
	}
	if err := CheckUploadName(name); err != nil {
		return err
	}
	if _, err := s.exec(ctx, `INSERT INTO upload_names (sha256, name, at_us) VALUES (?, ?, ?)
		ON CONFLICT (sha256) DO UPDATE SET name = excluded.name, at_us = excluded.at_us`, sum, name, micros(now())); err != nil {
		return fmt.Errorf("store: naming upload %s…: %w", sum[:ShortSum], err)
	}
	return nil
}

// UploadNames returns the names of the uploads whose SHA-256 starts with
// one of keys (each a whole SHA-256 or its first ShortSum digits or
// more), by SHA-256; an upload without a name is left out.
func (s *Store) UploadNames(ctx context.Context, keys []string) (map[string]string, error) {
	short, err := CheckUploadKeys(keys)
	if err != nil || len(short) == 0 {
		return map[string]string{}, err
	}
	args := make([]any, len(short))
	for i, p := range short {
		args[i] = p
	}
	rows, err := s.db.QueryContext(ctx, `SELECT sha256, name FROM upload_names WHERE substr(sha256, 1, 12) IN (`+placeholders(len(short))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: reading upload names: %w", err)
	}
	defer rows.Close()
	found := map[string]string{}
	for rows.Next() {
		var sum, name string
		if err := rows.Scan(&sum, &name); err != nil {
			return nil, fmt.Errorf("store: reading upload names: %w", err)
		}
		found[sum] = name
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: reading upload names: %w", err)
	}
	return MatchUploadKeys(found, keys), nil
}

// ForgetUploadNames removes the names of the uploads sums (a server
// removing files no run names any more).
func (s *Store) ForgetUploadNames(ctx context.Context, sums []string) error {
	for _, sum := range sums {
		if err := CheckUploadSum(sum); err != nil {
			return err
		}
	}
	for lo := 0; lo < len(sums); lo += 500 {
		part := sums[lo:min(lo+500, len(sums))]
		args := make([]any, len(part))
		for i, sum := range part {
			args[i] = sum
		}
		if _, err := s.exec(ctx, `DELETE FROM upload_names WHERE sha256 IN (`+placeholders(len(part))+`)`, args...); err != nil {
			return fmt.Errorf("store: forgetting upload names: %w", err)
		}
	}
	return nil
}
