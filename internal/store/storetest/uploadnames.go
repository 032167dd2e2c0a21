package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/store"
)

// checkUploadNames: the store keeps the name each upload was sent with,
// by its content's SHA-256, and finds it by the whole sum or by the first
// digits a message quotes (never another upload's that shares them only
// when the whole sum is asked); a content sent again under another name
// takes the newer; a forgotten name is gone; bad sums, keys and names are
// refused naming the field.
func checkUploadNames(t *testing.T, s store.Backend) {
	ctx := context.Background()
	sum1 := strings.Repeat("3fa2c41b0e9d", 5) + "0123"
	sum2 := sum1[:store.ShortSum] + strings.Repeat("e", 64-store.ShortSum) // the same first digits
	sum3 := strings.Repeat("7", 64)
	names := func(keys ...string) string {
		t.Helper()
		got, err := s.UploadNames(ctx, keys)
		if err != nil {
			t.Fatalf("UploadNames(%q): %v", keys, err)
		}
		return fmt.Sprint(got)
	}
	for sum, name := range map[string]string{sum1: "y_short.csv", sum2: "données ÿ.csv", sum3: "x.csv"} {
		if err := s.SetUploadName(ctx, sum, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{sum1}, fmt.Sprint(map[string]string{sum1: "y_short.csv"})},
		{[]string{sum1[:20]}, fmt.Sprint(map[string]string{sum1: "y_short.csv"})},
		{[]string{sum1[:store.ShortSum]}, fmt.Sprint(map[string]string{sum1: "y_short.csv", sum2: "données ÿ.csv"})},
		{[]string{sum3, sum2, sum3}, fmt.Sprint(map[string]string{sum2: "données ÿ.csv", sum3: "x.csv"})},
		{[]string{strings.Repeat("0", 64)}, "map[]"},
		{nil, "map[]"},
	} {
		if got := names(c.keys...); got != c.want {
			t.Errorf("UploadNames(%q) = %s, want %s", c.keys, got, c.want)
		}
	}
	// sent again under another name: the newer
	if err := s.SetUploadName(ctx, sum1, "y_fixed.csv"); err != nil {
		t.Fatal(err)
	}
	if got, want := names(sum1), fmt.Sprint(map[string]string{sum1: "y_fixed.csv"}); got != want {
		t.Errorf("after a new name: %s, want %s", got, want)
	}
	if err := s.ForgetUploadNames(ctx, []string{sum1, sum3}); err != nil {
		t.Fatal(err)
	}
	if got, want := names(sum1[:store.ShortSum], sum3), fmt.Sprint(map[string]string{sum2: "données ÿ.csv"}); got != want {
		t.Errorf("after forgetting two: %s, want %s", got, want)
	}

	for _, bad := range []string{"", "3fa2", strings.ToUpper(sum1), sum1[:63], sum1 + "0", sum1[:63] + "g"} {
		if err := s.SetUploadName(ctx, bad, "x.csv"); !fieldErr(err, "sha256") {
			t.Errorf("naming the upload %q: %v, want an error naming sha256", bad, err)
		}
		if err := s.ForgetUploadNames(ctx, []string{sum2, bad}); !fieldErr(err, "sha256") {
			t.Errorf("forgetting the upload %q: %v, want an error naming sha256", bad, err)
		}
	}
	for _, bad := range []string{sum1[:11], "xyz" + sum1[3:], sum1 + "00"} {
		if _, err := s.UploadNames(ctx, []string{sum2, bad}); !fieldErr(err, "keys[1]") {
			t.Errorf("looking up %q: %v, want an error naming keys[1]", bad, err)
		}
	}
	for _, bad := range []string{"", "a\x00b.csv", "\xff.csv", strings.Repeat("é", store.MaxUploadName+1)} {
		if err := s.SetUploadName(ctx, sum3, bad); !fieldErr(err, "name") {
			t.Errorf("naming an upload %.20q: %v, want an error naming name", bad, err)
		}
	}
	if err := s.SetUploadName(ctx, sum3, strings.Repeat("é", store.MaxUploadName)); err != nil {
		t.Errorf("a name of %d characters: %v", store.MaxUploadName, err)
	}
	// nothing refused was kept, and sum2 was not forgotten with a bad sum
	if got, want := names(sum2, sum3), fmt.Sprint(map[string]string{sum2: "données ÿ.csv", sum3: strings.Repeat("é", store.MaxUploadName)}); got != want {
		t.Errorf("after the refusals: %s, want %s", got, want)
	}
}
