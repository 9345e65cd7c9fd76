// Small DOM helpers. Everything that comes from the API reaches the page as text nodes or
// attribute values (textContent, setAttribute): no string from a run is ever parsed as HTML.

// h makes an element: props sets attributes (class, data-*, aria-*, ...), a few properties
// (text, value, checked, disabled, hidden) and listeners (on: {click: fn}); children are nodes,
// strings (made text nodes), or arrays of them; null and undefined are skipped.
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) {
      continue;
    }
    if (k === 'on') {
      for (const [type, fn] of Object.entries(v)) {
        el.addEventListener(type, fn);
      }
    } else if (k === 'text') {
      el.textContent = String(v);
    } else if (k === 'value' || k === 'checked' || k === 'disabled' || k === 'hidden') {
      el[k] = v;
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

// append adds children (nodes, strings, nested arrays) to el.
export function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) {
      continue;
    }
    if (Array.isArray(c)) {
      append(el, c);
    } else if (c instanceof Node) {
      el.appendChild(c);
    } else {
      el.appendChild(document.createTextNode(String(c)));
    }
  }
  return el;
}

// replace empties el and adds children.
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// $ finds one element by id.
export function $(id) {
  const el = document.getElementById(id);
  if (!el) {
    throw new Error('the page has no #' + id);
  }
  return el;
}

// num writes a count with thousands separators ('–' for none).
export function num(v) {
  if (v === null || v === undefined || Number.isNaN(v)) {
    return '–';
  }
  if (typeof v === 'number' && !Number.isInteger(v)) {
    return Number(v.toPrecision(3)).toLocaleString('en-US', {maximumFractionDigits: 6});
  }
  return Number(v).toLocaleString('en-US');
}

// words writes an identifier (awaiting_prompt) as words (awaiting prompt).
export function words(s) {
  return String(s || '').replaceAll('_', ' ');
}

// badge is a small label whose class carries its value, for color: badge('status', 'done').
export function badge(kind, value, text) {
  const v = String(value || '');
  return h('span', {class: `badge ${kind} ${kind}-${v.replace(/[^a-z0-9_-]/gi, '')}`, text: text ?? words(v)});
}

// clip shortens a string to n characters, marking the cut.
export function clip(s, n) {
  s = String(s);
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

// confirmButton is a button that asks for a second click within a few seconds before it acts,
// for what cannot be undone (kill an agent, cancel a run). label is its text; confirm the text
// while armed; act runs on the second click.
export function confirmButton(label, confirm, props, act) {
  let timer = null;
  const btn = h('button', {type: 'button', ...props, text: label});
  const disarm = () => {
    clearTimeout(timer);
    timer = null;
    btn.textContent = label;
    btn.classList.remove('armed');
  };
  btn.addEventListener('click', () => {
    if (timer === null) {
      btn.textContent = confirm;
      btn.classList.add('armed');
      timer = setTimeout(disarm, 4000);
      return;
    }
    disarm();
    act();
  });
  btn.addEventListener('blur', () => {
    if (timer !== null) {
      disarm();
    }
  });
  return btn;
}

// Throttle runs fn at most once per interval milliseconds, never twice at once: a request while
// fn runs, or too soon after it ran, schedules one more run for when it may.
export class Throttle {
  constructor(fn, interval) {
    this.fn = fn;
    this.interval = interval;
    this.last = 0;
    this.busy = false;
    this.again = false;
    this.timer = null;
  }

  request() {
    if (this.busy) {
      this.again = true;
      return;
    }
    const wait = this.last + this.interval - performance.now();
    if (wait > 0) {
      if (this.timer === null) {
        this.timer = setTimeout(() => {
          this.timer = null;
          this.run();
        }, wait);
      }
      return;
    }
    this.run();
  }

  async run() {
    this.busy = true;
    this.last = performance.now();
    try {
      await this.fn();
    } finally {
      this.busy = false;
      if (this.again) {
        this.again = false;
        this.request();
      }
    }
  }

  cancel() {
    clearTimeout(this.timer);
    this.timer = null;
    this.again = false;
  }
}
