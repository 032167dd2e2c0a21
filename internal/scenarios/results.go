package scenarios

import "fmt"

// ResultPanels is implemented by instances that can show a method's final
// estimate on the dashboard: ResultPanels turns x (the Result.X of any of
// the instance's methods) into JSON-encodable panels, beside the instance's
// own Info().Panels. It is called once per finished trace, never while a
// method runs; it returns an error for an x of the wrong size.
type ResultPanels interface {
	ResultPanels(x []float64) (map[string]any, error)
}

// DecodedWordsShown is how many words the SSVM result panel decodes.
const DecodedWordsShown = 8

// ResultPanels returns {"B": the coefficient matrix of x} (J rows of K
// values, as CoefMatrix).
func (g *GFLASSOInstance) ResultPanels(x []float64) (map[string]any, error) {
	if d := g.P.Dim(); len(x) != d {
		return nil, fmt.Errorf("gflasso: the estimate has %d entries, want %d", len(x), d)
	}
	return map[string]any{"B": g.CoefMatrix(x)}, nil
}

// ResultPanels returns {"decoded": [{truth, predicted, errors}, …]}: the
// first DecodedWordsShown test words (training words without a test set)
// decoded with plain Viterbi at the weights x.
func (s *SSVMInstance) ResultPanels(x []float64) (map[string]any, error) {
	words, err := s.Problem.DecodeWords(x, DecodedWordsShown)
	if err != nil {
		return nil, err
	}
	return map[string]any{"decoded": words}, nil
}

var (
	_ ResultPanels = (*GFLASSOInstance)(nil)
	_ ResultPanels = (*SSVMInstance)(nil)
	_ ResultPanels = (*FWInstance)(nil)
)
