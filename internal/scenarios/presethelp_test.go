package scenarios

import "testing"

// Every preset has a name, a title and a help text of its own.
func TestPresetsAreDistinct(t *testing.T) {
	seen := map[string]string{}
	for _, p := range Presets() {
		for kind, v := range map[string]string{"title": p.Title, "help": p.Help} {
			if v == "" {
				t.Errorf("preset %s has no %s", p.Name, kind)
				continue
			}
			if other, ok := seen[kind+v]; ok {
				t.Errorf("presets %s and %s share their %s %q", other, p.Name, kind, v)
			}
			seen[kind+v] = p.Name
		}
	}
}
