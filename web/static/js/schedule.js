// The batch schedule m_k and its preview's axes: pure functions, no DOM
// access.

// scheduleSize is m_k, the same formula as internal/solver/schedule.go.
export function scheduleSize(s, k, n) {
  if (n <= 1) return n;
  let m;
  switch (s.kind) {
    case 'paper': {
      const q = Math.exp(2 * s.alpha * k * Math.log1p(-s.rho));
      m = Math.ceil(n / (1 + n * q));
      break;
    }
    case 'constant':
      m = s.m0;
      break;
    case 'geometric':
      m = Math.ceil(s.m0 * Math.pow(s.growth, k - 1));
      break;
    default:
      m = n;
  }
  if (!(m >= 1)) m = 1;
  if (m > n) m = n;
  return m;
}

// previewSeries returns m_k for k = 1…K, with K the first multiple of 10
// at which the batch is full (at most maxK).
export function previewSeries(s, n, maxK) {
  maxK = maxK || 400;
  let K = 10;
  while (K < maxK && scheduleSize(s, K, n) < n) K += 10;
  const m = [];
  for (let k = 1; k <= K; k++) m.push(scheduleSize(s, k, n));
  return { K, m };
}

// niceTicks returns about count round tick values covering [lo, hi]
// (1, 2 or 5 times a power of ten apart), within the range.
export function niceTicks(lo, hi, count) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, count || 4);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((f) => f * p).find((s) => s >= raw) || 10 * p;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  return out;
}
