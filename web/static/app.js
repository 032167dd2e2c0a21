// fwlab dashboard script, the entry module: it starts the start page or
// the live run page. Each part of the page is a module of its own under
// js/ (form, stream, charts, events, teaching, panels, export) and the
// logic that needs no page (decimation, scales and tick labels, the
// schedule preview, the rules, the teaching view's arithmetic) lives in
// modules without DOM access, tested in the browser harness. No build
// step; uPlot is the vendored global.

import { $, fwlab } from './js/util.js';
import { initStart } from './js/form.js';
import { initRun } from './js/run.js';
import { initHistory } from './js/history.js';
import { initCompare } from './js/compare.js';
import { initSweep } from './js/sweep.js';
import { initSweeps, runSweepLink } from './js/sweeps.js';
import * as lab from './js/lab.js';
import * as sweepplots from './js/sweepplots.js';
import * as format from './js/format.js';
import * as decimate from './js/decimate.js';
import * as schedule from './js/schedule.js';
import * as rules from './js/rules.js';
import * as teachmath from './js/teachmath.js';
import * as ranges from './js/ranges.js';
import * as progress from './js/progress.js';
import * as teachview from './js/teachview.js';
import * as effective from './js/effective.js';
import { Trace } from './js/traces.js';

// The pure functions, for the browser tests and the console.
Object.assign(fwlab, {
  Decimator: decimate.Decimator,
  merge: decimate.merge,
  ema: decimate.ema,
  bestSeen: decimate.bestSeen,
  binEvents: decimate.binEvents,
  fmtNum: format.fmtNum,
  fmtCell: format.fmtCell,
  metric: format.metric,
  scheduleSize: schedule.scheduleSize,
  previewSeries: schedule.previewSeries,
  niceTicks: schedule.niceTicks,
  checkParam: rules.checkParam,
  checkAlgo: rules.checkAlgo,
  uses: rules.uses,
  specRule: rules.specRule,
  algoText: rules.algoText,
  describeStep: teachmath.describeStep,
  gammaMax: teachmath.gammaMax,
  vertexAt: teachmath.vertexAt,
  Trace,
  lab,
  sweepplots,
  ranges,
  progress,
  teachview,
  effective,
});

function main() {
  const page = document.body.dataset.page;
  if (page === 'start' && $('#start-form')) initStart();
  if (page === 'run' && $('#run-page')) {
    initRun();
    runSweepLink();
  }
  if (page === 'history' && $('#history-page')) initHistory();
  if (page === 'compare' && $('#compare-page')) initCompare();
  if (page === 'sweep' && $('#sweep-page')) initSweep();
  if (page === 'sweeps' && $('#sweeps-page')) initSweeps();
  fwlab.modules = true;
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', main);
else main();
