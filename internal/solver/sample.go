package solver

import "math/rand/v2"

// iterRNG returns the random source of iteration k of a run with the given
// seed. Every random choice of an iteration (its batch, its blocks) is drawn
// from it, so results depend only on (seed, k), never on scheduling.
func iterRNG(seed int64, k int, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(iterSeed(seed, k, stream)))
}

func iterSeed(seed int64, k int, stream uint64) (uint64, uint64) {
	return uint64(seed) ^ 0x9e3779b97f4a7c15, uint64(k)*0xbf58476d1ce4e5b9 + stream
}

// iterSource is iterRNG without an allocation per iteration: one generator
// reseeded for every iteration gives the same draws.
type iterSource struct {
	pcg *rand.PCG
	rng *rand.Rand
}

func newIterSource() *iterSource {
	pcg := rand.NewPCG(0, 0)
	return &iterSource{pcg: pcg, rng: rand.New(pcg)}
}

// at returns the random source of iteration k, valid until the next call.
func (s *iterSource) at(seed int64, k int, stream uint64) *rand.Rand {
	s.pcg.Seed(iterSeed(seed, k, stream))
	return s.rng
}

// sampler draws subsets of {0, …, n−1} uniformly without replacement by a
// partial Fisher–Yates shuffle of a persistent permutation: O(m) per draw.
type sampler struct {
	perm []int
}

func newSampler(n int) *sampler {
	s := &sampler{perm: make([]int, n)}
	for i := range s.perm {
		s.perm[i] = i
	}
	return s
}

// draw returns m distinct indices; the slice is valid until the next draw.
func (s *sampler) draw(r *rand.Rand, m int) []int {
	n := len(s.perm)
	for i := 0; i < m; i++ {
		j := i + r.IntN(n-i)
		s.perm[i], s.perm[j] = s.perm[j], s.perm[i]
	}
	return s.perm[:m]
}
