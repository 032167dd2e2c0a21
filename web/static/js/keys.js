// The run page's keyboard shortcuts: space pauses or resumes, "." takes a
// single step, "r" resets the charts' zoom (Esc too), "?" lists them. Keys
// typed into a field are the field's; the teaching view's presentation
// mode has keys of its own (listed here too), "?" works there as well.

import { $, el, fwlab } from './util.js';

export const SHORTCUTS = [
  ['space', 'pause or resume the run (presenting: the next step)'],
  ['.', 'one step of a paused run'],
  ['r', "reset the charts' zoom and follow the run"],
  ['Esc', "reset the charts' zoom (presenting: leave presentation mode)"],
  ['→', 'presenting: the next step (a paused run takes one more)'],
  ['←', 'presenting: the step before'],
  ['p', 'presenting: play or pause the steps'],
  ['0', "presenting: show the whole polygon again"],
  ['?', 'show or hide this list'],
];

// typing tells whether a key event belongs to a form field.
export function typing(ev) {
  const t = ev.target;
  return !!t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName || ''));
}

// bindRunKeys wires the shortcuts; resetZoom resets the charts.
export function bindRunKeys(resetZoom) {
  const box = el('div', { id: 'shortcuts', class: 'card shortcuts', role: 'dialog', 'aria-label': 'keyboard shortcuts', hidden: '' });
  box.append(el('h4', { text: 'Keyboard shortcuts' }), el('dl', {}, ...SHORTCUTS.flatMap(([k, what]) => [el('dt', {}, el('kbd', { text: k })), el('dd', { text: what })])));
  const close = el('button', { type: 'button', class: 'small', text: 'Close' });
  close.addEventListener('click', () => (box.hidden = true));
  box.append(close);
  document.body.append(box);
  const click = (id) => {
    const b = $(id);
    if (!b || b.disabled) return false;
    b.click();
    return true;
  };
  document.addEventListener('keydown', (ev) => {
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey || typing(ev)) return;
    // presenting, the teaching view has its keys; the list is everyone's
    if (document.body.classList.contains('presenting') && ev.key !== '?') return;
    // Space on a focused button presses that button.
    if (ev.key === ' ' && ev.target && ev.target.tagName === 'BUTTON') return;
    let done = true;
    if (ev.key === ' ') done = click('#btn-pause') || click('#btn-resume');
    else if (ev.key === '.') done = click('#btn-step');
    else if (ev.key === 'r') resetZoom();
    else if (ev.key === '?') box.hidden = !box.hidden;
    else if (ev.key === 'Escape' && !box.hidden) box.hidden = true;
    else done = false;
    if (done) {
      ev.preventDefault();
      fwlab.keys = (fwlab.keys || 0) + 1;
    }
  });
}
