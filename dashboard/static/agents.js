// The run's agents, never all at once: the agents table reads one page (/agents, 100 a page) with
// the filters set, and the sub-agent tree one level at a time (/tree?parent=), a page of children
// at a time, so a run of 10^5 agents, or a node with 10^4 children, stays usable.

import {api, runPath} from './api.js';
import {h, replace, badge, num, words} from './dom.js';

const PAGE = 100;

// setOptions fills a <select> with an "any" choice and names, keeping its choice when it is
// still offered; it touches nothing when the names did not change.
function setOptions(select, names, any) {
  const key = names.join('\u0000');
  if (select.dataset.key === key) {
    return;
  }
  select.dataset.key = key;
  const chosen = select.value;
  replace(select, h('option', {value: '', text: any}), names.map((n) => h('option', {value: n, text: words(n)})));
  select.value = names.includes(chosen) ? chosen : '';
}

// AgentsTable is the filtered, paged table of a run's agents. els: form (the filters: phase,
// group, status, prefix), body (the tbody), range (what the page shows), prev and next.
export class AgentsTable {
  constructor(els, {onOpen, onError}) {
    this.els = els;
    this.onOpen = onOpen;
    this.onError = onError;
    this.run = null;
    this.cursors = [0];
    this.selected = '';
    this.key = '';
    const f = els.form.elements;
    for (const name of ['phase', 'group', 'status']) {
      f[name].addEventListener('change', () => this.restart());
    }
    let timer = null;
    f.prefix.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.restart(), 300);
    });
    els.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.restart();
    });
    els.prev.addEventListener('click', () => {
      if (this.cursors.length > 1) {
        this.cursors.pop();
        this.refresh();
      }
    });
    els.next.addEventListener('click', () => {
      if (this.page && this.page.next) {
        this.cursors.push(this.page.next);
        this.refresh();
      }
    });
  }

  // show switches to another run: first page, no filter.
  show(run) {
    this.run = run;
    this.cursors = [0];
    this.page = null;
    this.key = '';
    this.els.form.reset();
    replace(this.els.body);
    this.els.range.textContent = '';
  }

  // filters offers the run's phases, groups and statuses (from its counts) in the selects.
  filters(counts) {
    const f = this.els.form.elements;
    setOptions(f.phase, counts.by_phase.map((c) => c.name), 'any phase');
    setOptions(f.group, counts.by_group.map((c) => c.name), 'any group');
    setOptions(f.status, counts.by_status.map((c) => c.name), 'any status');
  }

  restart() {
    this.cursors = [0];
    this.refresh();
  }

  // highlight marks the row of the agent shown in the agent panel.
  highlight(name) {
    this.selected = name || '';
    for (const tr of this.els.body.rows) {
      tr.classList.toggle('selected', tr.dataset.name === this.selected);
    }
  }

  // refresh reads the current page again.
  async refresh() {
    if (!this.run) {
      return;
    }
    const f = this.els.form.elements;
    const after = this.cursors[this.cursors.length - 1];
    const run = this.run;
    let page;
    try {
      page = await api(runPath(run, '/agents', {limit: PAGE, after, phase: f.phase.value, group: f.group.value,
        status: f.status.value, prefix: f.prefix.value.trim()}));
    } catch (err) {
      this.onError(err);
      return;
    }
    if (run !== this.run) {
      return;
    }
    this.page = page;
    const first = (this.cursors.length - 1) * PAGE;
    this.els.range.textContent = page.items.length
      ? `${num(first + 1)}–${num(first + page.items.length)} of ${num(page.total)} agents`
      : `no agent matches (of ${num(page.total)})`;
    this.els.prev.disabled = this.cursors.length === 1;
    this.els.next.disabled = !page.next;
    const key = JSON.stringify(page.items);
    if (key === this.key) {
      return;
    }
    this.key = key;
    replace(this.els.body, page.items.map((a) => this.row(a)));
    this.highlight(this.selected);
  }

  row(a) {
    return h('tr', {'data-name': a.name},
      h('td', {class: 'num', text: a.id}),
      h('th', {scope: 'row'}, h('button', {type: 'button', class: 'link', text: a.name,
        'aria-label': `Open agent ${a.name}`, on: {click: () => this.onOpen(a.name)}})),
      h('td', {text: a.group}),
      h('td', {text: a.stage}),
      h('td', {}, badge('phase', a.phase)),
      h('td', {}, badge('status', a.status)),
      h('td', {class: 'num', text: num(a.model_turns)}),
      h('td', {class: 'num', text: num(a.tool_calls)}),
      h('td', {class: 'num', text: num(a.tool_errors)}),
      h('td', {class: 'num', text: num(a.tokens)}),
      h('td', {class: 'num', text: num(a.children)}));
  }
}

// Tree is the sub-agent tree: the top-level agents, and each node's children loaded when it is
// opened, a page at a time with a button for more. Reload reads again the levels open.
export class Tree {
  constructor(root, {onOpen, onError}) {
    this.root = root;
    this.onOpen = onOpen;
    this.onError = onError;
    this.run = null;
    this.open = new Set();
  }

  show(run) {
    this.run = run;
    this.open = new Set();
    replace(this.root);
    return this.reload();
  }

  // reload reads the top level again, and the first page of every node that was open.
  async reload() {
    if (!this.run) {
      return;
    }
    const list = h('ul', {class: 'tree-level'});
    await this.level(list, '', 0);
    replace(this.root, list);
  }

  // level appends one page of parent's children (the top level for '') to list, then a "more"
  // button when there are more.
  async level(list, parent, after) {
    const run = this.run;
    let page;
    try {
      page = await api(runPath(run, '/tree', {parent, after, limit: PAGE}));
    } catch (err) {
      this.onError(err);
      return;
    }
    if (run !== this.run) {
      return;
    }
    if (!page.items.length && !after) {
      list.appendChild(h('li', {class: 'quiet', text: parent ? 'no children' : 'no agent yet'}));
    }
    for (const node of page.items) {
      list.appendChild(this.node(node));
    }
    const shown = list.querySelectorAll(':scope > li.node').length;
    if (page.next) {
      const more = h('li', {class: 'more'});
      more.appendChild(h('button', {type: 'button', text: `Show more (${num(shown)} of ${num(page.total)})`,
        'aria-label': `Show more ${parent ? 'children of ' + parent : 'top-level agents'}`,
        on: {click: async (e) => {
          e.currentTarget.disabled = true;
          more.remove();
          await this.level(list, parent, page.next);
        }}}));
      list.appendChild(more);
    }
  }

  node(n) {
    const li = h('li', {class: 'node', 'data-name': n.name});
    const children = h('ul', {class: 'tree-level', hidden: true});
    let loaded = false;
    const toggle = h('button', {type: 'button', class: 'toggle', 'aria-expanded': 'false',
      'aria-label': `Show the ${n.children} children of ${n.name}`, text: '▸', disabled: n.children === 0});
    const expand = async (show) => {
      toggle.setAttribute('aria-expanded', String(show));
      toggle.textContent = show ? '▾' : '▸';
      children.hidden = !show;
      if (show) {
        this.open.add(n.name);
      } else {
        this.open.delete(n.name);
      }
      if (show && !loaded) {
        loaded = true;
        await this.level(children, n.name, 0);
      }
    };
    toggle.addEventListener('click', () => expand(toggle.getAttribute('aria-expanded') !== 'true'));
    li.append(toggle, ' ',
      h('button', {type: 'button', class: 'link', text: n.name, 'aria-label': `Open agent ${n.name}`,
        on: {click: () => this.onOpen(n.name)}}), ' ',
      badge('status', n.status), ' ', badge('phase', n.phase), ' ',
      h('span', {class: 'meta', text: n.children ? `${num(n.children)} children · ${num(n.descendants)} descendants` : ''}),
      children);
    if (n.children > 0 && this.open.has(n.name)) {
      expand(true);
    }
    return li;
  }
}
