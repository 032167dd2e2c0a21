package web

import (
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/web/templates"
)

// groupTitles names the catalogue's groups on the start page; a group not
// listed here is shown under its own name, after these.
var groupTitles = []struct{ name, title string }{
	{"toy", "Teaching polytopes"},
	{"model", "Regression and classification models"},
	{"gflasso", "Graph-guided fused LASSO"},
	{"ssvm", "Structural SVM"},
}

// Catalogue converts the registry's scenarios and presets into the start
// page's view model, grouped in a fixed order.
func Catalogue(list []*scenarios.Scenario, presets []*scenarios.Preset) templates.Catalogue {
	byGroup := map[string][]templates.Problem{}
	var extra []string
	for _, s := range list {
		pr := templates.Problem{
			Name: s.Name, Title: s.Title, Help: s.Help, Group: s.Group,
			Algorithms: append([]string(nil), s.Algorithms...),
			Defaults:   append([]spec.Algo(nil), s.Defaults...),
			OwnSteps:   s.OwnSteps, Averages: s.Averages,
		}
		if pr.Title == "" {
			pr.Title = s.Name
		}
		pr.Iters, pr.Passes = s.Budget()
		for _, p := range s.Params {
			pr.Params = append(pr.Params, templates.Param{ParamView: p.View()})
		}
		if _, seen := byGroup[s.Group]; !seen {
			known := false
			for _, g := range groupTitles {
				known = known || g.name == s.Group
			}
			if !known {
				extra = append(extra, s.Group)
			}
		}
		byGroup[s.Group] = append(byGroup[s.Group], pr)
	}
	var c templates.Catalogue
	for _, g := range groupTitles {
		if ps := byGroup[g.name]; len(ps) > 0 {
			c.Groups = append(c.Groups, templates.Group{Name: g.name, Title: g.title, Problems: ps})
		}
	}
	for _, name := range extra {
		title := name
		if title == "" {
			title = "Other problems"
		}
		c.Groups = append(c.Groups, templates.Group{Name: name, Title: title, Problems: byGroup[name]})
	}
	for _, p := range presets {
		c.Presets = append(c.Presets, templates.Preset{Name: p.Name, Title: p.Title, Help: p.Help, Spec: p.Spec})
	}
	c.Defaults = templates.Defaults{
		Stepsize: spec.DefaultStepsize, Schedule: spec.DefaultSchedule,
		Rho: spec.DefaultRho, Alpha: spec.DefaultAlpha, M0: spec.DefaultM0, Growth: spec.DefaultGrowth,
		Iters: spec.DefaultIters, EvalEvery: spec.DefaultEval,
		MaxIters: spec.MaxIters, MaxReplications: spec.MaxReplications, MaxAlgorithms: spec.MaxAlgorithms,
	}
	return c
}

// DefaultProblem is the problem the start page opens with when it is
// registered (otherwise the catalogue's first): the 2-D teaching problem.
const DefaultProblem = "toy-polygon"

// StartPage builds the start page's view model from deps.
func StartPage(deps Deps) templates.StartPage {
	c := Catalogue(deps.scenarios(), deps.presets())
	sel := ""
	for _, g := range c.Groups {
		for _, p := range g.Problems {
			if sel == "" || p.Name == DefaultProblem {
				sel = p.Name
			}
		}
	}
	c.Algorithms = []any{}
	if deps.Algorithms != nil {
		c.Algorithms = deps.Algorithms()
	}
	return templates.StartPage{Catalogue: c, Selected: sel, DataDir: deps.DataDir, Asset: AssetURL}
}
