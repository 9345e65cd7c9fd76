// The trace viewer: pages of a run's trace events (/trace?after=&limit=), and, when following,
// the live stream's events appended as they come (at most FOLLOW rows kept, drawn a few times a
// second however fast they come). Then the diff of two runs' traces (/diff?a=&b=).

import {api, runPath} from './api.js';
import {h, replace, clip, num} from './dom.js';

const PAGE = 200;
const FOLLOW = 500;
const COMMON = new Set(['tick', 'seq', 'agent', 'name', 'kind']);

// details writes an event's own fields (those besides the common five) as name=value.
function details(ev) {
  const parts = [];
  for (const [k, v] of Object.entries(ev)) {
    if (!COMMON.has(k)) {
      parts.push(k + '=' + (typeof v === 'string' ? v : JSON.stringify(v)));
    }
  }
  return clip(parts.join('  '), 400);
}

// TraceViewer shows one run's trace. els: body (tbody), range, first, older, newer, latest,
// follow (a checkbox), seek (a form with an input "seq").
export class TraceViewer {
  constructor(els, {onOpen, onError}) {
    this.els = els;
    this.onOpen = onOpen;
    this.onError = onError;
    this.run = null;
    this.events = 0;
    this.shown = [];
    this.pending = [];
    this.drawTimer = null;
    const browse = (after) => {
      els.follow.checked = false;
      this.load(after);
    };
    els.first.addEventListener('click', () => browse(0));
    els.older.addEventListener('click', () => browse(Math.max(0, this.firstSeq() - 1 - PAGE)));
    els.newer.addEventListener('click', () => this.load(this.lastSeq()));
    els.latest.addEventListener('click', () => this.load(Math.max(0, this.events - PAGE)));
    els.follow.addEventListener('change', () => {
      if (els.follow.checked) {
        this.load(Math.max(0, this.events - PAGE));
      }
    });
    els.seek.addEventListener('submit', (e) => {
      e.preventDefault();
      const seq = parseInt(els.seek.elements.seq.value, 10);
      if (seq > 0) {
        browse(seq - 1);
      }
    });
  }

  show(run, events) {
    this.run = run;
    this.events = events;
    this.shown = [];
    this.pending = [];
    replace(this.els.body);
    this.els.range.textContent = '';
    return this.load(0);
  }

  // progress tells the viewer how many events the run has now (for "latest").
  progress(events) {
    if (events > this.events) {
      this.events = events;
      this.label();
    }
  }

  // label says which events the table shows, of how many.
  label() {
    this.els.range.textContent = this.shown.length
      ? `events ${num(this.firstSeq())}–${num(this.lastSeq())} of ${num(this.events)}`
      : 'no events here';
    this.els.older.disabled = this.firstSeq() <= 1;
  }

  firstSeq() {
    return this.shown.length ? this.shown[0].seq : 1;
  }

  lastSeq() {
    return this.shown.length ? this.shown[this.shown.length - 1].seq : 0;
  }

  // load shows the page of events after seq `after`.
  async load(after) {
    const run = this.run;
    if (!run) {
      return;
    }
    let page;
    try {
      page = await api(runPath(run, '/trace', {after, limit: PAGE}));
    } catch (err) {
      this.onError(err);
      return;
    }
    if (run !== this.run) {
      return;
    }
    this.shown = page.events;
    this.events = Math.max(this.events, page.next);
    // Live events that came during the request and go past this page are drawn with the next
    // flush; flush drops those the page has already.
    this.draw();
  }

  // tail reloads the last page when following without a live stream (the page polls instead).
  tail() {
    if (this.els.follow.checked) {
      return this.load(Math.max(0, this.events - PAGE));
    }
    return null;
  }

  // live takes one event of the stream, as its JSON text; it is parsed only if drawn.
  live(seq, data) {
    this.events = Math.max(this.events, seq);
    if (!this.els.follow.checked || seq <= this.lastSeq()) {
      return;
    }
    this.pending.push(data);
    if (this.pending.length > FOLLOW) {
      this.pending.splice(0, this.pending.length - FOLLOW);
    }
    if (this.drawTimer === null) {
      this.drawTimer = setTimeout(() => {
        this.drawTimer = null;
        this.flush();
      }, 250);
    }
  }

  flush() {
    const fresh = [];
    for (const d of this.pending) {
      try {
        fresh.push(JSON.parse(d));
      } catch {
        // a line the server sent is JSON; skip one that is not rather than stop
      }
    }
    this.pending = [];
    const last = this.lastSeq();
    this.shown = this.shown.concat(fresh.filter((e) => e.seq > last)).slice(-FOLLOW);
    this.draw();
  }

  draw() {
    const rows = this.shown.map((ev) => h('tr', {},
      h('td', {class: 'num', text: ev.seq}),
      h('td', {class: 'num', text: ev.tick}),
      h('td', {}, ev.name ? h('button', {type: 'button', class: 'link', text: ev.name, 'aria-label': `Open agent ${ev.name}`,
        on: {click: () => this.onOpen(ev.name)}}) : h('span', {class: 'quiet', text: 'world'})),
      h('td', {}, h('code', {text: ev.kind})),
      h('td', {class: 'details', text: details(ev)})));
    const wrap = this.els.body.closest('.scroll');
    const atBottom = wrap && wrap.scrollTop + wrap.clientHeight >= wrap.scrollHeight - 8;
    replace(this.els.body, rows);
    this.label();
    if (wrap && this.els.follow.checked && atBottom) {
      wrap.scrollTop = wrap.scrollHeight;
    }
  }
}

// Diff compares two runs' traces: els are form (selects a and b), out (a pre) and notes (a list).
export class Diff {
  constructor(els, {onError}) {
    this.els = els;
    this.onError = onError;
    els.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.compare();
    });
  }

  // runs offers the server's runs in both selects, current first in a and the one before in b.
  runs(ids, current) {
    const {a, b} = this.els.form.elements;
    const key = ids.join('\u0000');
    if (a.dataset.key === key) {
      return;
    }
    a.dataset.key = key;
    for (const sel of [a, b]) {
      const chosen = sel.value;
      replace(sel, ids.map((id) => h('option', {value: id, text: id})));
      if (ids.includes(chosen)) {
        sel.value = chosen;
      }
    }
    if (!a.value || a.value === b.value) {
      a.value = current || ids[0] || '';
      b.value = ids.find((id) => id !== a.value) || '';
    }
  }

  async compare() {
    const {a, b} = this.els.form.elements;
    this.els.out.textContent = 'Comparing…';
    replace(this.els.notes);
    try {
      const d = await api('/diff?' + new URLSearchParams({a: a.value, b: b.value}).toString());
      this.els.out.textContent = d.same ? `The traces of ${a.value} and ${b.value} are identical.` : d.report;
      replace(this.els.notes, (d.notes || []).map((n) => h('li', {text: n})));
    } catch (err) {
      this.els.out.textContent = 'The diff failed: ' + err.message;
      this.onError(err);
    }
  }
}
