package queue

import (
	"encoding/json"
	"fmt"

	"github.com/fwlab/fwlab/internal/sweep"
)

// jsonAxes is a sweep's axes as the store keeps them.
func jsonAxes(axes []sweep.Axis) (json.RawMessage, error) {
	b, err := json.Marshal(axes)
	if err != nil {
		return nil, fmt.Errorf("queue: encoding the sweep's axes: %w", err)
	}
	return b, nil
}
