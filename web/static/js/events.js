// Drop and away marks on the charts: per algorithm, in its colour, each in
// a lane of its own above the plot (never over the data), and a density
// strip instead of single marks where there is more than one per few
// pixels.

import { binEvents } from './decimate.js';
import { alpha } from './format.js';
import { fwlab } from './util.js';

const BIN = 3; // css pixels per bin of the density test
export const LANE = 7; // css pixels per lane

// laneSpace is the room above a chart's plot for the lanes of groups
// algorithms, in css pixels.
export function laneSpace(groups, S) {
  const kinds = (S.showDrops ? 1 : 0) + (S.showAways ? 1 : 0);
  return 6 + groups * kinds * (LANE + 1);
}

// drawEvents is a uPlot draw hook: it marks the events of each group's
// first replication and records what it drew in fwlab.charts[id].
export function drawEvents(C, u, S) {
  const st = fwlab.charts[C.def.id];
  const ctx = u.ctx;
  const { left, top, width, height } = u.bbox;
  const dpr = devicePixelRatio || 1;
  const laneH = LANE * dpr;
  const space = laneSpace(S.groups.length, S) * dpr;
  let drops = 0, aways = 0;
  const marks = [];
  const dense = {};
  ctx.save();
  ctx.beginPath();
  ctx.rect(left, top - space, width, space);
  ctx.clip();
  // Lanes from the top: each algorithm's drops, then its away steps.
  let laneIdx = 0;
  const lanes = {};
  S.groups.forEach((g) => {
    if (S.showDrops) lanes[g.key + '/drop'] = laneIdx++;
    if (S.showAways) lanes[g.key + '/away'] = laneIdx++;
  });
  S.groups.forEach((g) => {
    // A group hidden from the legend has no marks either.
    if (S.hidden && S.hidden.has(g.key)) return;
    const t = g.traces[0];
    const xcol = t.cols[S.xaxis];
    const positions = (list) => {
      const xs = [];
      for (const i of list) {
        const xv = xcol[i];
        if (!(xv === xv) || (S.logx && !(xv > 0))) continue;
        const px = u.valToPos(xv, 'x', true);
        if (px < left || px > left + width) continue;
        xs.push(px);
      }
      return xs;
    };
    const lane = (kind) => top - space + 3 * dpr + lanes[g.key + '/' + kind] * (laneH + dpr);
    const draw = (kind, list) => {
      const xs = positions(list);
      if (!xs.length) return 0;
      const y0 = lane(kind);
      const bins = binEvents(xs, BIN * dpr);
      dense[`${g.key}/${kind}`] = bins.dense;
      if (bins.dense) {
        // Density strip: one cell per bin, darker where events crowd.
        for (const [b, c] of bins.bins) {
          ctx.fillStyle = alpha(g.color, Math.min(1, 0.3 + (0.7 * c) / Math.max(2, bins.max)));
          ctx.fillRect(b * BIN * dpr, y0, BIN * dpr, laneH);
        }
        marks.push({ group: g.key, color: g.color, kind, x: xs[0], y: y0 + laneH / 2, strip: true });
        return xs.length;
      }
      ctx.fillStyle = g.color;
      ctx.strokeStyle = 'rgba(0,0,0,0.55)';
      ctx.lineWidth = 0.6 * dpr;
      for (const px of xs) {
        ctx.beginPath();
        if (kind === 'drop') {
          ctx.moveTo(px - 4 * dpr, y0);
          ctx.lineTo(px + 4 * dpr, y0);
          ctx.lineTo(px, y0 + laneH);
        } else {
          ctx.rect(px - 1.5 * dpr, y0, 3 * dpr, laneH);
        }
        ctx.closePath();
        ctx.fill();
        ctx.stroke();
      }
      marks.push({ group: g.key, color: g.color, kind, x: xs[0], y: kind === 'drop' ? y0 + 2 * dpr : y0 + laneH / 2, strip: false });
      return xs.length;
    };
    if (S.showAways) aways += draw('away', t.aways);
    if (S.showDrops) drops += draw('drop', t.drops);
  });
  ctx.restore();
  st.drops = drops;
  st.aways = aways;
  st.marks = marks;
  st.dense = dense;
}

// markProbe reads the canvas where each recorded mark was drawn and says
// whether the pixel carries the colour of the mark's algorithm.
export function markProbe(C) {
  const st = fwlab.charts[C.def.id];
  if (!C.u || !st || !st.marks) return [];
  const ctx = C.u.ctx;
  return st.marks.map((m) => {
    const px = ctx.getImageData(Math.round(m.x), Math.round(m.y), 1, 1).data;
    const n = parseInt(m.color.slice(1), 16);
    const want = [(n >> 16) & 255, (n >> 8) & 255, n & 255];
    // An opaque mark has the colour itself; a strip cell is the colour
    // over white, so the same hue, lighter.
    const d = Math.max(...want.map((w, i) => Math.abs(w - px[i])));
    const k = [];
    want.forEach((w, i) => {
      if (255 - w > 20) k.push((px[i] - w) / (255 - w));
      else if (Math.abs(px[i] - w) > 20) k.push(NaN);
    });
    const sameHue = k.length > 0 && k.every((x) => x >= -0.1 && x <= 0.9) && Math.max(...k) - Math.min(...k) < 0.15;
    return { group: m.group, kind: m.kind, color: m.color, strip: m.strip, pixel: Array.from(px), match: d < 40 || (m.strip && sameHue) };
  });
}
