// Warren's dashboard: the server's runs, and one run's state, charts, prompts, agents, tree,
// trace and diff, all read from the API (docs/api.md). The address's hash says what is shown
// (#run=ID&agent=NAME), so a view can be reloaded or shared (the token is not in it).
//
// Refreshing: while a run goes, the page follows its live event stream (SSE) and refreshes what
// the events changed, at most once a second. A run that writes more events than a page should
// read (LIVE_LIMIT a second) is not followed event by event: the page polls it once a second, and
// follows it again once it calms down (a run waiting for people writes nothing). Once the run
// ended, one last refresh, then nothing but the runs list every few seconds.

import {api, runPath, events, takeToken, setToken, onUnauthorized} from './api.js';
import {h, replace, $, num, badge, confirmButton, Throttle} from './dom.js';
import {Charts} from './charts.js';
import {renderLog} from './conversation.js';
import {AgentsTable, Tree} from './agents.js';
import {TraceViewer, Diff} from './trace.js';

// PROMPTS_SHOWN bounds the prompts listed at once. LIVE_LIMIT is the events per second past
// which (two seconds running) the page closes the live stream and polls instead; it opens the
// stream when the run writes less than a quarter of that. PROMPTS_EVERY is how often, without
// the stream, the page reads the prompts when their number did not change.
const PROMPTS_SHOWN = 200;
const LIVE_LIMIT = 2000;
const PROMPTS_EVERY = 5000;
const PERSON_KEY = 'warren-person';

const state = {
  runs: [],
  runId: '',
  info: null,
  ended: false,
  agent: '',
  agentNeedle: '',
  agentKey: '',
  es: null,
  sseOpen: false,
  liveFailed: false,
  sample: null,
  rate: null,
  prompts: {n: -1, at: 0},
  lastRefresh: 0,
  dirty: {prompts: true, agent: true},
};

// status says what happened in the page's status line.
function status(text, error = false) {
  const el = $('status');
  el.textContent = text;
  el.classList.toggle('error', error);
}

function showError(err) {
  status(err && err.message ? err.message : String(err), true);
}

// person is the name a person's commands are recorded with.
function person() {
  return $('person').value.trim() || 'dashboard';
}

// ---- runs ----------------------------------------------------------------------------------

async function loadRuns() {
  let runs;
  try {
    runs = await api('/runs');
  } catch (err) {
    showError(err);
    return;
  }
  state.runs = runs;
  renderRuns();
  diff.runs(runs.map((r) => r.id), state.runId);
}

function renderRuns() {
  const runs = state.runs;
  $('runs-empty').hidden = runs.length > 0;
  replace($('runs-body'), runs.map((r) => h('tr', {class: r.id === state.runId ? 'selected' : null, 'data-run': r.id},
    h('th', {scope: 'row'}, h('button', {type: 'button', class: 'link', text: r.id, 'aria-label': `Open run ${r.id}`,
      on: {click: () => go(r.id, '')}})),
    h('td', {text: r.scenario}),
    h('td', {}, badge('state', r.state)),
    h('td', {}, r.status ? badge('status', r.status) : null, r.error ? h('span', {class: 'error small', text: ' ' + r.error}) : null),
    h('td', {class: 'num', text: num(r.tick)}),
    h('td', {class: 'num', text: num(r.events)}),
    h('td', {class: 'num', text: num(r.agents)}),
    h('td', {class: 'num', text: num(r.prompts)}),
    h('td', {text: new Date(r.started).toLocaleString()}))));
}

// submit starts a run. The seed is a uint64, more than a JavaScript number holds exactly, so
// the body is written as JSON text with the seed's digits as they were typed.
async function submit(e) {
  e.preventDefault();
  const f = e.currentTarget.elements;
  const out = $('submit-error');
  const launch = [];
  const seed = f.seed.value.trim();
  if (seed) {
    if (!/^[0-9]{1,20}$/.test(seed) || BigInt(seed) >= 2n ** 64n) {
      out.textContent = 'The seed is a whole number from 0 to 18446744073709551615.';
      return;
    }
    launch.push('"seed":' + BigInt(seed).toString());
  }
  const agents = f.agents.value.trim();
  if (agents) {
    launch.push('"agents":' + parseInt(agents, 10));
  }
  const body = '{"file":' + JSON.stringify(f.file.value.trim()) + ',"launch":{' + launch.join(',') + '}}';
  try {
    const run = await api('/runs', {method: 'POST', body});
    out.textContent = '';
    status(`Started ${run.id}.`);
    await loadRuns();
    go(run.id, '');
  } catch (err) {
    out.textContent = err.message;
  }
}

// ---- routing -------------------------------------------------------------------------------

// go shows a run (and an agent of it) by setting the address's hash.
function go(run, agent) {
  const p = new URLSearchParams();
  if (run) {
    p.set('run', run);
  }
  if (agent) {
    p.set('agent', agent);
  }
  location.hash = p.toString();
}

function route() {
  const p = new URLSearchParams(location.hash.slice(1));
  const run = p.get('run') || '';
  if (run !== state.runId) {
    showRun(run);
  }
  const agent = run ? p.get('agent') || '' : '';
  if (agent !== state.agent) {
    showAgent(agent);
  }
}

// ---- one run -------------------------------------------------------------------------------

function showRun(id) {
  stopLive();
  refresher.cancel();
  Object.assign(state, {runId: id, info: null, ended: false, liveFailed: false, sample: null, rate: null,
    prompts: {n: -1, at: 0}, dirty: {prompts: true, agent: true}});
  $('run-section').hidden = !id;
  $('run-nav').hidden = !id;
  $('live-note').hidden = true;
  renderRuns();
  if (!id) {
    return;
  }
  $('run-title').textContent = id;
  for (const el of ['run-state', 'run-status', 'run-where', 'run-error', 'run-failures', 'run-figures', 'prompts']) {
    replace($(el));
  }
  charts.clear();
  agents.show(id);
  tree.show(id);
  trace.show(id, 0);
  refresher.request();
}

// refreshRun reads what changed of the shown run: its state and counts, its metrics, the agents
// page shown, and, when events said they changed (or, without a live stream, when their number
// changed or a while passed), its prompts and the open agent.
async function refreshRun() {
  const id = state.runId;
  if (!id) {
    return;
  }
  const now = performance.now();
  state.lastRefresh = now;
  const dirty = state.dirty;
  state.dirty = {prompts: false, agent: false};
  const live = state.sseOpen;
  const promptsChanged = !state.info || state.info.prompts !== state.prompts.n || now - state.prompts.at > PROMPTS_EVERY;
  const tasks = [
    api(runPath(id)).then((d) => id === state.runId && renderRun(d)),
    api(runPath(id, '/metrics')).then((m) => {
      if (id === state.runId) {
        charts.update(m);
        agents.filters(m.counts);
      }
    }),
    agents.refresh(),
  ];
  if (!live) {
    tasks.push(trace.tail());
  }
  if (dirty.prompts || (!live && promptsChanged)) {
    state.prompts.at = now;
    tasks.push(api(runPath(id, '/prompts')).then((p) => {
      if (id === state.runId) {
        state.prompts.n = p.length;
        renderPrompts(p);
      }
    }));
  }
  if (state.agent && (dirty.agent || !live)) {
    tasks.push(loadAgent());
  }
  for (const r of await Promise.allSettled(tasks)) {
    if (r.status === 'rejected') {
      showError(r.reason);
    }
  }
  if (id !== state.runId || !state.info) {
    return;
  }
  if (state.sample) {
    state.rate = ((state.info.events - state.sample.events) * 1000) / Math.max(1, now - state.sample.at);
  }
  state.sample = {events: state.info.events, at: now};
  if (state.info.state === 'ended') {
    $('live-note').hidden = true;
    if (!state.ended) {
      // What was read alongside may predate the end: read everything once more.
      state.ended = true;
      stopLive();
      state.dirty = {prompts: true, agent: true};
      refresher.request();
      tree.reload();
    }
    return;
  }
  // Follow the events live when the run writes few enough of them (known from two refreshes).
  if (!state.es && !state.liveFailed && state.rate !== null && state.rate < LIVE_LIMIT / 4) {
    startLive(id, state.info.events);
  }
  const note = $('live-note');
  note.hidden = !!state.es || state.rate === null;
  note.textContent = state.liveFailed
    ? 'The live event stream failed: the page refreshes every second.'
    : `The run writes ${num(Math.round(state.rate))} events a second: the page refreshes every second rather than follow each one.`;
}

function renderRun(d) {
  state.info = d;
  // The runs list shows this run as fresh as its own page.
  const i = state.runs.findIndex((r) => r.id === d.id);
  if (i >= 0) {
    state.runs[i] = d;
    renderRuns();
  }
  const c = d.counts;
  replace($('run-state'), badge('state', d.state));
  replace($('run-status'), d.status ? badge('status', d.status) : null);
  const seed = d.launch && d.launch.seed !== undefined ? ` · seed ${d.launch.seed}` : '';
  $('run-where').textContent = `${d.scenario} · ${d.file}${seed} · started ${new Date(d.started).toLocaleString()}`;
  $('run-error').textContent = d.error || '';
  replace($('run-failures'), (d.failures || []).map((f) => h('li', {text: f})));
  const verdicts = c.tool_calls_by_verdict.map((v) => `${num(v.n)} ${v.name}`).join(', ');
  const figures = [
    ['Tick', num(d.tick)], ['Events', num(d.events)], ['Agents', `${num(c.agents)} (${num(c.live)} live)`],
    ['By status', c.by_status.map((s) => `${num(s.n)} ${s.name}`).join(', ') || '–'],
    ['Model turns', num(c.model_turns)], ['Tool calls', num(c.tool_calls) + (verdicts ? ` (${verdicts})` : '')],
    ['Tool errors', num(c.tool_errors)], ['Tokens', num(c.tokens)], ['Cost', '$' + c.cost_usd],
    ['Prompts open', num(c.prompts_open)],
  ];
  replace($('run-figures'), figures.map(([k, v]) => h('div', {}, h('dt', {text: k}), h('dd', {text: v}))));
  $('pause').disabled = d.state !== 'running';
  $('resume').disabled = d.state !== 'paused';
  cancel.disabled = d.state === 'ended';
  trace.progress(d.events);
}

// command sends a run command (pause, resume, cancel) and refreshes.
async function command(route, params, done) {
  const id = state.runId;
  try {
    await api(runPath(id, route, params), {method: 'POST'});
    status(`${done} ${id}: the run applies it at its next tick.`);
  } catch (err) {
    showError(err);
  }
  refresher.request();
}

// ---- live events ---------------------------------------------------------------------------

// startLive follows the run's events after seq `after`: each marks what it changed and asks for
// a (throttled) refresh; the trace viewer takes them when it follows. Events are not parsed
// here, only searched for the few words that say what changed.
function startLive(id, after) {
  const es = events(id, after);
  state.es = es;
  let windowStart = performance.now();
  let count = 0;
  let hot = 0;
  es.onopen = () => {
    state.sseOpen = true;
  };
  es.onerror = () => {
    // The browser reconnects by itself (with Last-Event-ID) unless the server refused the stream.
    state.sseOpen = es.readyState === EventSource.OPEN;
    if (es.readyState === EventSource.CLOSED && state.es === es) {
      state.es = null;
      state.liveFailed = true;
    }
  };
  es.addEventListener('trace', (e) => {
    const d = e.data;
    trace.live(Number(e.lastEventId), d);
    if (d.includes('"kind":"prompt"') || d.includes('"kind":"answer"') || d.includes('"kind":"terminal"') || d.includes('"kind":"kill"')) {
      state.dirty.prompts = true;
    }
    if (state.agentNeedle && d.includes(state.agentNeedle)) {
      state.dirty.agent = true;
    }
    count++;
    const now = performance.now();
    if (now - windowStart >= 1000) {
      hot = (count * 1000) / (now - windowStart) > LIVE_LIMIT ? hot + 1 : 0;
      count = 0;
      windowStart = now;
      if (hot >= 2) {
        stopLive();
      }
    }
    refresher.request();
  });
  es.addEventListener('end', () => {
    stopLive();
    state.dirty = {prompts: true, agent: true};
    refresher.request();
  });
  // Fallen behind what the server keeps: polling goes on, and the stream opens again from now.
  es.addEventListener('behind', stopLive);
}

function stopLive() {
  if (state.es) {
    state.es.close();
  }
  state.es = null;
  state.sseOpen = false;
}

// ---- prompts -------------------------------------------------------------------------------

const promptKey = (p) => p.agent + '\u0000' + p.call_id;

// renderPrompts shows the prompts waiting, oldest first, keeping the items already shown (a
// half-typed reply, or a sent answer the world has not applied yet, stays as it is).
function renderPrompts(list) {
  const ul = $('prompts');
  const shown = list.slice(0, PROMPTS_SHOWN);
  const keep = new Set(shown.map(promptKey));
  const have = new Map();
  for (const li of [...ul.children]) {
    if (keep.has(li.dataset.key)) {
      have.set(li.dataset.key, li);
    } else {
      li.remove();
    }
  }
  let prev = null;
  for (const p of shown) {
    const li = have.get(promptKey(p)) || promptItem(p);
    const at = prev ? prev.nextSibling : ul.firstChild;
    if (at !== li) {
      ul.insertBefore(li, at);
    }
    prev = li;
  }
  $('prompts-count').textContent = list.length ? `(${num(list.length)})` : '';
  const note = $('prompts-note');
  note.hidden = list.length > 0 && list.length <= shown.length;
  note.textContent = list.length ? `${num(list.length - shown.length)} more wait after these.` : 'No prompt waits.';
}

const APPROVAL = [['deny', 'Deny'], ['once', 'Allow once'], ['stage', 'Allow for this stage'], ['run', 'Allow for the run']];

function promptItem(p) {
  const li = h('li', {class: 'prompt', 'data-key': promptKey(p), 'data-agent': p.agent, 'data-call': p.call_id, 'data-kind': p.kind});
  const error = h('p', {class: 'error', role: 'alert'});
  const sent = h('p', {class: 'sent-note', 'aria-live': 'polite'});
  const send = async (answer) => {
    const controls = li.querySelectorAll('.answers button, .answers input');
    controls.forEach((c) => {
      c.disabled = true;
    });
    error.textContent = '';
    try {
      await api(runPath(state.runId, '/answer'), {method: 'POST', body: {agent: p.agent, call_id: p.call_id, answer, by: person()}});
      li.classList.add('sent');
      sent.textContent = `Sent “${answer}”: the run applies it at its next tick.`;
      state.dirty.prompts = true;
      refresher.request();
    } catch (err) {
      error.textContent = err.message;
      controls.forEach((c) => {
        c.disabled = false;
      });
    }
  };
  const label = `${p.agent}'s ${p.tool}`;
  let answers;
  if (p.kind === 'approval') {
    answers = APPROVAL.map(([answer, text]) => h('button', {type: 'button', class: answer === 'deny' ? 'danger' : null,
      'data-answer': answer, text, 'aria-label': `${text}: ${label}`, on: {click: () => send(answer)}}));
  } else if (p.choices && p.choices.length) {
    answers = p.choices.map((c) => h('button', {type: 'button', 'data-answer': c, text: c, 'aria-label': `Answer ${p.agent}: ${c}`,
      on: {click: () => send(c)}}));
  } else {
    const input = h('input', {name: 'reply', required: true, autocomplete: 'off', 'aria-label': `Reply to ${p.agent}`});
    answers = h('form', {class: 'row', on: {submit: (e) => {
      e.preventDefault();
      if (input.value.trim()) {
        send(input.value);
      }
    }}}, input, h('button', {type: 'submit', text: 'Send'}));
  }
  const what = p.kind === 'approval' ? ` wants to run ${p.tool}` : ' asks';
  li.append(
    h('p', {class: 'prompt-head'},
      h('button', {type: 'button', class: 'link', text: p.agent, 'aria-label': `Open agent ${p.agent}`, on: {click: () => go(state.runId, p.agent)}}),
      ` (${p.group})${what}`, h('span', {class: 'meta', text: ` · tick ${p.tick} · ${p.call_id}`})),
    p.text ? h('p', {class: 'prompt-text', text: p.text}) : null,
    p.keys && p.keys.length ? h('p', {class: 'meta', text: 'permission keys: ' + p.keys.join(', ')}) : null,
    h('div', {class: 'answers', role: 'group', 'aria-label': `Answer ${label}`}, answers),
    sent, error);
  return li;
}

// ---- one agent -----------------------------------------------------------------------------

function showAgent(name) {
  state.agent = name;
  state.agentKey = '';
  // How the agent's own events name it in the stream (the field after "agent").
  state.agentNeedle = name ? '"name":' + JSON.stringify(name) + ',' : '';
  $('agent-panel').hidden = !name;
  agents.highlight(name);
  if (!name) {
    return;
  }
  $('agent-title').textContent = name;
  for (const el of ['agent-badges', 'agent-figures', 'agent-controls', 'agent-error', 'agent-log']) {
    replace($(el));
  }
  loadAgent().then(() => $('agent-title').focus());
}

async function loadAgent() {
  const {agent: name, runId: run} = state;
  try {
    const d = await api(runPath(run, '/agent', {name}));
    if (name === state.agent && run === state.runId) {
      $('agent-error').textContent = '';
      renderAgent(d);
    }
  } catch (err) {
    if (name === state.agent) {
      $('agent-error').textContent = err.message;
    }
  }
}

function renderAgent(d) {
  const last = d.log.length ? d.log[d.log.length - 1].seq : 0;
  const key = [d.status, d.phase, d.stage, d.log.length, last, d.log_dropped, d.children, state.ended].join('|');
  if (key === state.agentKey) {
    return;
  }
  state.agentKey = key;
  replace($('agent-badges'), badge('status', d.status), ' ', badge('phase', d.phase), ' ',
    h('span', {class: 'meta', text: `${d.group} · ${d.blueprint} · ${d.model} · stage ${d.stage}`}));
  const figures = [
    ['Turns', num(d.model_turns)], ['Tool calls', num(d.tool_calls)], ['Tool errors', num(d.tool_errors)],
    ['Tokens', num(d.tokens)], ['Cost', '$' + d.cost_usd], ['Prompts open', num(d.prompts_open)],
    ['Children', `${num(d.children)} (${num(d.descendants)} descendants)`],
  ];
  replace($('agent-figures'),
    figures.map(([k, v]) => h('div', {}, h('dt', {text: k}), h('dd', {text: v}))),
    d.parent_name ? h('div', {}, h('dt', {text: 'Parent'}), h('dd', {}, h('button', {type: 'button', class: 'link',
      text: d.parent_name, 'aria-label': `Open agent ${d.parent_name}`, on: {click: () => go(state.runId, d.parent_name)}}))) : null,
    d.reason ? h('div', {class: 'wide'}, h('dt', {text: 'Reason'}), h('dd', {text: d.reason})) : null);
  const kill = confirmButton('Kill agent', `Really kill ${d.name}${d.descendants ? ' and its subtree' : ''}?`,
    {class: 'danger', 'aria-label': `Kill agent ${d.name}`, id: 'agent-kill', disabled: d.status !== 'running' || state.ended},
    async () => {
      try {
        await api(runPath(state.runId, '/kill'), {method: 'POST', body: {agent: d.name, by: person()}});
        status(`Kill of ${d.name} sent: the run applies it at its next tick.`);
        state.dirty.agent = true;
        refresher.request();
      } catch (err) {
        $('agent-error').textContent = err.message;
      }
    });
  replace($('agent-controls'), kill);
  const panel = $('agent-log');
  const atBottom = panel.scrollTop + panel.clientHeight >= panel.scrollHeight - 8;
  replace(panel, renderLog(d.log, d.log_dropped));
  if (atBottom) {
    panel.scrollTop = panel.scrollHeight;
  }
}

// ---- wiring --------------------------------------------------------------------------------

const onOpen = (name) => go(state.runId, name);
const charts = new Charts({phases: $('chart-phases'), throughput: $('chart-throughput'), graph: $('chart-graph')});
const agents = new AgentsTable({form: $('agents-form'), body: $('agents-body'), range: $('agents-range'),
  prev: $('agents-prev'), next: $('agents-next')}, {onOpen, onError: showError});
const tree = new Tree($('tree'), {onOpen, onError: showError});
const trace = new TraceViewer({body: $('trace-body'), range: $('trace-range'), first: $('trace-first'), older: $('trace-older'),
  newer: $('trace-newer'), latest: $('trace-latest'), follow: $('trace-follow'), seek: $('trace-seek')}, {onOpen, onError: showError});
const diff = new Diff({form: $('diff-form'), out: $('diff-out'), notes: $('diff-notes')}, {onError: showError});
const refresher = new Throttle(refreshRun, 1000);
const cancel = confirmButton('Cancel run', 'Really cancel the run?', {class: 'danger', id: 'cancel'},
  () => command('/cancel', {by: person()}, 'Cancel sent to'));
$('cancel-slot').replaceWith(cancel);

function init() {
  takeToken();
  onUnauthorized(() => {
    $('token-section').hidden = false;
    status('The server refused the token.', true);
  });
  $('token-form').addEventListener('submit', (e) => {
    e.preventDefault();
    setToken(e.currentTarget.elements.token.value);
    $('token-section').hidden = true;
    status('');
    loadRuns();
    refresher.request();
  });
  const p = $('person');
  p.value = localStorage.getItem(PERSON_KEY) || '';
  p.addEventListener('change', () => localStorage.setItem(PERSON_KEY, p.value.trim()));
  $('submit-form').addEventListener('submit', submit);
  $('pause').addEventListener('click', () => command('/pause', null, 'Pause sent to'));
  $('resume').addEventListener('click', () => command('/resume', null, 'Resume sent to'));
  $('tree-reload').addEventListener('click', () => tree.reload());
  $('agent-close').addEventListener('click', () => go(state.runId, ''));
  $('agent-title').tabIndex = -1;
  window.addEventListener('hashchange', route);
  // Polling: the runs list every 3 s; the shown run every second without a live stream, every
  // 5 s with one (pausing is not an event), never once it ended. Not while the tab is hidden.
  setInterval(() => !document.hidden && loadRuns(), 3000);
  setInterval(() => {
    if (document.hidden || !state.runId || state.ended) {
      return;
    }
    if (!state.sseOpen || performance.now() - state.lastRefresh > 5000) {
      refresher.request();
    }
  }, 1000);
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) {
      loadRuns();
      refresher.request();
    }
  });
  window.warrenDashboard = {state, charts: charts.instances};
  loadRuns().then(() => {
    route();
    document.body.dataset.ready = '1';
  });
}

init();
