package sweep

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/spec"
)

// TestEveryFieldHasAWord: each field of an algorithm's settings and each
// run field a sweep can vary has a word, so a field added to the spec
// without one fails here rather than labelling its axis "path of cd".
func TestEveryFieldHasAWord(t *testing.T) {
	check := func(typ reflect.Type, skip ...string) {
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" || slices.Contains(skip, name) {
				continue
			}
			if words[name] == "" {
				t.Errorf("%s field %q has no word", typ.Name(), name)
			}
		}
	}
	check(reflect.TypeFor[spec.Algo]())
	// the problem, its params and the algorithms are labelled otherwise;
	// start_paused and outside are not sweep axes
	check(reflect.TypeFor[spec.Run](), "problem", "params", "algorithms", "start_paused", "outside")
}
