package ssvm

import (
	"testing"
	"time"
)

func TestTmpVit(t *testing.T) {
	p := ocrProblem(t, 0.01)
	n := p.N()
	m, _ := p.NewMethod(Options{Algo: AlgoBCFW, Average: true, Limits: defaultLimits(n), Seed: 1})
	for j := 0; j < 3*n; j++ {
		m.iterate()
	}
	K := p.K
	E := p.AllEmissions(p.Train, m.w, nil)
	first, last, trans := p.parts(m.w)
	dec := newDecoder(K, 20)
	y := make([]int, 20)
	ds := p.Train
	var buf []float64
	bestV, bestF := time.Hour, time.Hour
	for rep := 0; rep < 30; rep++ {
		t0 := time.Now()
		for _, wd := range ds.Words {
			dec.Viterbi(E[wd.Start*K:(wd.Start+wd.Len)*K], first, last, trans, ds.Y[wd.Start:wd.Start+wd.Len], y[:wd.Len])
		}
		t1 := time.Now()
		buf = p.AllEmissions(p.Train, m.w, buf)
		t2 := time.Now()
		bestV, bestF = min(bestV, t1.Sub(t0)), min(bestF, t2.Sub(t1))
	}
	t.Logf("viterbi pass %v floor %v: %.3f floors", bestV, bestF, bestV.Seconds()/bestF.Seconds())
}
