// The teaching view's arithmetic: which vertex a point is, the largest
// step allowed, and the step written out in words. Pure functions, no DOM
// access.

import { fmtCell } from './format.js';

// vertexAt returns the vertex of verts ({key, x, y}) at (x, y), or null.
export function vertexAt(verts, x, y) {
  if (x == null || y == null) return null;
  let best = null, bd = Infinity;
  for (const v of verts) {
    const d = Math.hypot(v.x - x, v.y - y);
    if (d < bd) (bd = d), (best = v);
  }
  const scale = Math.max(1, ...verts.map((v) => Math.hypot(v.x, v.y)));
  return bd <= 1e-9 * scale ? best : null;
}

// gammaMax is the largest step the method may take from a record whose
// active-set weights before the step are prev ({"w:key": μ}): 1 for a FW
// step, μ_u/(1 − μ_u) for an away step from u, μ_u for a pairwise step.
export function gammaMax(step, awayKey, prev) {
  if (step === 'fw' || step === 'full-collapse') return 1;
  const mu = prev && awayKey != null ? prev['w:' + awayKey] : undefined;
  if (!(mu >= 0)) return NaN;
  if (step === 'pairwise') return mu;
  if (step === 'away' || step === 'drop') return mu >= 1 ? Infinity : mu / (1 - mu);
  return NaN;
}

const g = (x) => fmtCell(x, 3);
const pt = (x, y) => `(${fmtCell(x, 3)}, ${fmtCell(y, 3)})`;

// describeStep writes record i of a trace in words. rec: {k, step, gamma};
// cur and prev: the record's and the previous record's extra (iterate,
// weights, fw_x0/1 and away_x0/1); verts: the polygon's vertices.
export function describeStep(rec, cur, prev, verts) {
  cur = cur || {};
  const name = (v) => (v ? v.key : 'a vertex');
  const fw = vertexAt(verts, cur.fw_x0, cur.fw_x1);
  const away = vertexAt(verts, cur.away_x0, cur.away_x1);
  const gm = gammaMax(rec.step, away && away.key, prev);
  const bound = (rel) => (gm === gm ? ` ${rel} γ_max = ${gm === Infinity ? '∞' : g(gm)}` : '');
  switch (rec.step) {
    case 'none': {
      const at = cur.x0 != null ? vertexAt(verts, cur.x0, cur.x1) : null;
      return rec.k === 0 ? `start at ${at ? at.key : cur.x0 != null ? pt(cur.x0, cur.x1) : 'x₀'}` : 'no move: the direction or the step is zero';
    }
    case 'fw':
      return `FW step toward ${name(fw)}, γ = ${g(rec.gamma)}${bound('≤')}`;
    case 'full-collapse':
      return `FW step toward ${name(fw)} with γ = 1: the active set collapses to {${name(fw)}}`;
    case 'away':
      return `away step from ${name(away)}, γ = ${g(rec.gamma)}${bound('≤')}` + (fw ? ` (FW vertex ${fw.key} not taken)` : '');
    case 'drop':
      return `drop step: away from ${name(away)} with γ = ${g(rec.gamma)}${bound('=')}, so ${name(away)} leaves the active set`;
    case 'pairwise':
      return `pairwise step: weight moves from ${name(away)} to ${name(fw)}, γ = ${g(rec.gamma)}${bound('≤')}`;
    case 'prox':
      if (cur.from_x0 != null)
        return (
          `proximal step: gradient step ${cur.at_x0 != null ? `from ${pt(cur.at_x0, cur.at_x1)} ` : ''}to ${pt(cur.from_x0, cur.from_x1)}, ` +
          `projected onto P at ${pt(cur.x0, cur.x1)} (step 1/L = ${g(rec.gamma)})`
        );
      return `proximal step with 1/L = ${g(rec.gamma)}`;
  }
  return `${rec.step} step, γ = ${g(rec.gamma)}`;
}
