package scenarios

// String names the kind as the JSON API and the pages do.
func (k Kind) String() string {
	switch k {
	case Int:
		return "int"
	case Float:
		return "float"
	case Choice:
		return "choice"
	case Path:
		return "path"
	case Bool:
		return "bool"
	}
	return "string"
}

// ParamView is a parameter as the JSON API (GET /api/scenarios) and the
// start page present it: its rule both as bounds a client can check and in
// the words of the server's validation error.
type ParamView struct {
	Name         string   `json:"name"`
	Kind         string   `json:"kind"` // int, float, string, choice, path, bool
	Default      string   `json:"default"`
	Help         string   `json:"help"`
	Rule         string   `json:"rule"`
	Choices      []string `json:"choices,omitempty"`
	Min          *float64 `json:"min,omitempty"`
	Max          *float64 `json:"max,omitempty"`
	MinExclusive bool     `json:"min_exclusive,omitempty"`
	MaxExclusive bool     `json:"max_exclusive,omitempty"`
	Format       string   `json:"format,omitempty"` // file format of a path parameter
}

// View returns the parameter's presentation.
func (p Param) View() ParamView {
	v := ParamView{Name: p.Name, Kind: p.Kind.String(), Default: p.Default, Help: p.Help,
		Rule: p.Rule(), Choices: p.Choices, Format: p.Format}
	if p.HasMin {
		m := p.Min
		v.Min, v.MinExclusive = &m, p.MinExcl
	}
	if p.HasMax {
		m := p.Max
		v.Max, v.MaxExclusive = &m, p.MaxExcl
	}
	return v
}
