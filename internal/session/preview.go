package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
)

// ResolveParams validates a problem name and its parameters exactly as
// Create does for a run spec: the problem must be registered, every
// parameter must pass its rule (defaults fill the rest), and data-file
// parameters are confined to the data directory (or the uploads) and
// rewritten to absolute paths. Errors are *spec.FieldError naming
// "problem" or "params.<name>", with the words a run would give.
func (m *Manager) ResolveParams(problem string, params spec.Params) (*scenarios.Scenario, scenarios.Values, error) {
	if problem == "" {
		return nil, nil, spec.Errorf("problem", "is required")
	}
	sc, ok := scenarios.Lookup(problem)
	if !ok {
		return nil, nil, spec.Errorf("problem", "unknown problem %q (one of %s)", problem, strings.Join(scenarios.Names(), ", "))
	}
	vals, err := sc.Values(params)
	if err != nil {
		return nil, nil, asFieldError(err, "problem")
	}
	if err := m.resolvePaths(sc, params, vals); err != nil {
		return nil, nil, err
	}
	return sc, vals, nil
}

// BuildInstance builds the instance of validated values as Create does: a
// panic in the scenario's Build is an error, and a failure that is the
// instance's fault is a *spec.FieldError (naming the parameter when the
// scenario does, "problem" otherwise). When ctx ends first, the error wraps
// ctx.Err() and names no field.
func BuildInstance(ctx context.Context, sc *scenarios.Scenario, vals scenarios.Values, seed int64) (scenarios.Instance, error) {
	inst, err := buildSafely(ctx, sc, vals, seed)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("building %s: %w", sc.Name, ctx.Err())
		}
		return nil, asFieldError(fmt.Errorf("building %s: %w", sc.Name, err), "problem")
	}
	return inst, nil
}
