package ssvm

import (
	"fmt"
	"math/rand/v2"
)

// ChainConfig describes a synthetic chain-labelling data set of the OCR
// shape: words of a few letters over a small alphabet, each letter a noisy
// copy of its label's prototype feature vector, labels following a Markov
// chain with a preferred successor per label.
type ChainConfig struct {
	Train, Test    int     // number of words in each set
	Labels         int     // alphabet size K (2–8)
	Feat           int     // raw features per letter (a constant 1 is appended)
	MinLen, MaxLen int     // word length range (1 ≤ MinLen ≤ MaxLen ≤ 12)
	Noise          float64 // standard deviation of the feature noise
	Stick          float64 // probability of the preferred successor label (0–1)
	Seed           uint64
}

// DefaultChain is the built-in synthetic instance.
var DefaultChain = ChainConfig{Train: 200, Test: 100, Labels: 5, Feat: 8, MinLen: 3, MaxLen: 6, Noise: 1.0, Stick: 0.6, Seed: 1}

// Validate checks the configuration, naming the field and the rule.
func (c ChainConfig) Validate() error {
	switch {
	case c.Train < 1:
		return fmt.Errorf("train: must be at least 1, got %d", c.Train)
	case c.Test < 0:
		return fmt.Errorf("test: must be at least 0, got %d", c.Test)
	case c.Labels < 2 || c.Labels > 8:
		return fmt.Errorf("labels: must be between 2 and 8, got %d", c.Labels)
	case c.Feat < 1 || c.Feat > 256:
		return fmt.Errorf("features: must be between 1 and 256, got %d", c.Feat)
	case c.MinLen < 1 || c.MaxLen < c.MinLen || c.MaxLen > 12:
		return fmt.Errorf("word lengths: need 1 ≤ minlen ≤ maxlen ≤ 12, got %d and %d", c.MinLen, c.MaxLen)
	case !(c.Noise >= 0) || c.Noise > 100:
		return fmt.Errorf("noise: must be between 0 and 100, got %v", c.Noise)
	case !(c.Stick >= 0 && c.Stick <= 1):
		return fmt.Errorf("stick: must lie between 0 and 1, got %v", c.Stick)
	}
	return nil
}

// Chain generates the synthetic train and test sets, deterministically from
// the seed.
func Chain(c ChainConfig) (train, test *Dataset, err error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x5eed55))
	K, F := c.Labels, c.Feat
	proto := make([]float64, K*F)
	for i := range proto {
		proto[i] = rng.NormFloat64()
	}
	succ := make([]int, K) // preferred successor of each label
	for k := range succ {
		succ[k] = rng.IntN(K)
	}
	gen := func(name string, words int) *Dataset {
		d := &Dataset{Name: name, Labels: K, Feat: F + 1}
		for w := 0; w < words; w++ {
			L := c.MinLen + rng.IntN(c.MaxLen-c.MinLen+1)
			d.Words = append(d.Words, Word{Start: len(d.Y), Len: L})
			y := rng.IntN(K)
			for t := 0; t < L; t++ {
				if t > 0 {
					if rng.Float64() < c.Stick {
						y = succ[y]
					} else {
						y = rng.IntN(K)
					}
				}
				d.Y = append(d.Y, y)
				for f := 0; f < F; f++ {
					d.X = append(d.X, proto[y*F+f]+c.Noise*rng.NormFloat64())
				}
				d.X = append(d.X, 1)
			}
		}
		return d
	}
	train = gen("chain train", c.Train)
	test = gen("chain test", c.Test)
	return train, test, nil
}
