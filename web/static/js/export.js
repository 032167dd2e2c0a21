// Exports: a chart as a PNG with its title, explanation and legend, the
// complete trace as CSV or JSON Lines, the run bundle, and the run's
// figure drawn by the server.

import { el, fwlab, download } from './util.js';

// chartPNG composes a chart's canvas with a title, the one-line
// explanation, the run and the legend (each algorithm's colour and label,
// and the marks), and returns it as a canvas.
export function chartPNG(C, S) {
  const src = C.u.ctx.canvas;
  const dpr = src.width / Math.max(1, C.u.width || src.width);
  const pad = 12 * dpr;
  const lineH = 18 * dpr;
  const font = (px, bold) => `${bold ? '600 ' : ''}${px * dpr}px system-ui, sans-serif`;
  // Legend entries: one per algorithm, then the marks.
  const items = S.groups.map((g) => ({ color: g.color, text: g.label + (g.band ? ` (median of ${g.traces.length}, band min–max)` : '') }));
  if (S.showDrops && S.groups.some((g) => g.traces[0].drops.length)) items.push({ mark: 'drop', text: 'drop steps (top, in the algorithm’s colour)' });
  if (S.showAways && S.groups.some((g) => g.traces[0].aways.length)) items.push({ mark: 'away', text: 'away steps (bottom)' });
  const probe = document.createElement('canvas').getContext('2d');
  probe.font = font(12);
  // Lay the legend out in rows that fit the chart's width.
  const rows = [[]];
  let x = pad;
  for (const it of items) {
    const w = 22 * dpr + probe.measureText(it.text).width + 16 * dpr;
    if (x + w > src.width - pad && rows[rows.length - 1].length) {
      rows.push([]);
      x = pad;
    }
    rows[rows.length - 1].push({ ...it, x, w });
    x += w;
  }
  const headH = pad + lineH * 2.2;
  const legendH = rows.length * lineH + pad;
  const cv = document.createElement('canvas');
  cv.width = src.width;
  cv.height = headH + src.height + legendH;
  const ctx = cv.getContext('2d');
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, cv.width, cv.height);
  ctx.fillStyle = '#1d232a';
  ctx.textBaseline = 'top';
  ctx.font = font(16, true);
  ctx.fillText(C.def.title, pad, pad);
  ctx.font = font(11);
  ctx.fillStyle = '#555';
  const problem = (S.status && S.status.spec && S.status.spec.problem) || '';
  ctx.fillText(`${C.def.help}  ·  run ${S.runId}${problem ? ` (${problem})` : ''}`, pad, pad + lineH * 1.1, cv.width - 2 * pad);
  ctx.drawImage(src, 0, headH);
  let y = headH + src.height + pad / 2;
  ctx.font = font(12);
  ctx.textBaseline = 'middle';
  for (const row of rows) {
    for (const it of row) {
      const cy = y + lineH / 2;
      if (it.mark === 'drop') {
        ctx.fillStyle = '#555';
        ctx.beginPath();
        ctx.moveTo(it.x, cy - 5 * dpr);
        ctx.lineTo(it.x + 12 * dpr, cy - 5 * dpr);
        ctx.lineTo(it.x + 6 * dpr, cy + 5 * dpr);
        ctx.fill();
      } else if (it.mark === 'away') {
        ctx.fillStyle = '#555';
        ctx.fillRect(it.x + 4 * dpr, cy - 6 * dpr, 3 * dpr, 12 * dpr);
      } else {
        ctx.fillStyle = it.color;
        ctx.fillRect(it.x, cy - 2 * dpr, 16 * dpr, 4 * dpr);
      }
      ctx.fillStyle = '#1d232a';
      ctx.fillText(it.text, it.x + 22 * dpr, cy);
    }
    y += lineH;
  }
  return { canvas: cv, legend: items.map((i) => i.text), title: C.def.title };
}

export function exportPNG(C, S) {
  if (!C.u) return;
  const { canvas, legend, title } = chartPNG(C, S);
  const url = canvas.toDataURL('image/png');
  fwlab.exports.push({ kind: 'png', chart: C.def.id, bytes: url.length, title, legend, width: canvas.width, height: canvas.height });
  const a = el('a', { href: url, download: `fwlab-${S.runId}-${C.def.id}.png` });
  document.body.append(a);
  a.click();
  a.remove();
}

// exportTrace downloads the complete trace; a download the server broke
// off midway (it could not read every record) is reported and not saved.
export async function exportTrace(S, format, showError) {
  let res, text;
  try {
    res = await fetch(`/api/runs/${encodeURIComponent(S.runId)}/trace?format=${format}`);
    if (!res.ok) {
      showError(`export failed: the server answered ${res.status}`);
      return;
    }
    text = await res.text();
  } catch (e) {
    showError(`export failed: the download broke off (${e.message}); nothing was saved`);
    return;
  }
  fwlab.exports.push({ kind: format, bytes: text.length, lines: text.split('\n').filter((l) => l).length });
  fwlab.lastExport = text;
  const type = format === 'csv' ? 'text/csv' : 'application/x-ndjson';
  download(`fwlab-${S.runId}.${format === 'csv' ? 'csv' : 'jsonl'}`, new Blob([text], { type }));
}

// fetchDownload downloads a server file under name; an error answer is
// shown, not saved.
async function fetchDownload(S, url, name, kind, showError) {
  let res;
  try {
    res = await fetch(url);
  } catch (e) {
    showError(`${kind}: could not reach the server: ${e.message}`);
    return null;
  }
  if (!res.ok) {
    let msg = `the server answered ${res.status}`;
    try {
      const d = JSON.parse(await res.text());
      if (d && d.error) msg = d.error;
    } catch (e) {
      /* keep the status */
    }
    showError(`${kind} failed: ${msg}`);
    return null;
  }
  let blob;
  try {
    blob = await res.blob();
  } catch (e) {
    showError(`${kind} failed: the download broke off (${e.message}); nothing was saved`);
    return null;
  }
  fwlab.exports.push({ kind, bytes: blob.size, type: blob.type, name });
  download(name, blob);
  return blob;
}

// exportBundle downloads the run bundle (spec, version, instance summary,
// traces, summaries): the format of solve -format json, which the history
// page imports.
export async function exportBundle(S, showError) {
  const blob = await fetchDownload(S, `/api/runs/${encodeURIComponent(S.runId)}/bundle`, `fwlab-${S.runId}.json`, 'bundle', showError);
  if (blob) fwlab.lastBundle = await blob.text();
}

// exportFigure downloads the run's figure (svg, png or pdf) at the size
// the page's #figure-size chooses (column, page or slide).
export async function exportFigure(S, format, showError) {
  if (!['svg', 'png', 'pdf'].includes(format)) return;
  const sizeSel = document.querySelector('#figure-size');
  const size = sizeSel ? sizeSel.value : 'page';
  await fetchDownload(S, `/api/runs/${encodeURIComponent(S.runId)}/figure.${format}?size=${encodeURIComponent(size)}`, `fwlab-${S.runId}-${size}.${format}`, 'figure', showError);
}

// bindPNGButtons makes every [data-png] button of the page download its
// chart as a PNG.
export function bindPNGButtons(charts, S) {
  document.addEventListener('click', (ev) => {
    const b = ev.target.closest && ev.target.closest('[data-png]');
    if (!b) return;
    const C = charts.charts.find((c) => c.def.id === b.dataset.png);
    if (C) exportPNG(C, S);
  });
}
