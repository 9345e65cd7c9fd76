// An agent's log (AgentDetail.log, its last events) as a readable conversation: its task, the
// model's turns with their text, each tool call with its arguments and the gate's verdict, the
// prompts put to people and their answers, the results, and the moves between stages.

import {h, badge, words, num} from './dom.js';

// fieldsOf turns an entry's fields into an object by name.
function fieldsOf(entry) {
  const f = {};
  for (const x of entry.fields || []) {
    f[x.name] = x.value;
  }
  return f;
}

// pretty writes a call's JSON arguments indented, or as they are when they do not parse.
function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return String(text);
  }
}

function block(text, cls = '') {
  return h('pre', {class: 'block ' + cls, text});
}

function meta(...parts) {
  return h('span', {class: 'meta'}, parts.filter((p) => p !== null && p !== undefined && p !== '').join(' · '));
}

// extras writes the fields a renderer did not show, as name=value.
function extras(f, shown) {
  const rest = Object.entries(f).filter(([k, v]) => !shown.includes(k) && v !== '' && v !== null);
  if (!rest.length) {
    return null;
  }
  return h('dl', {class: 'fields'}, rest.map(([k, v]) => [
    h('dt', {text: k}), h('dd', {text: typeof v === 'string' ? v : JSON.stringify(v)}),
  ]));
}

// Each renderer returns [role, title, body nodes]; role picks the entry's look.
const renderers = {
  spawn(f) {
    const from = f.parent_name ? ` by ${f.parent_name}` : '';
    return ['system', `Spawned${from} in group ${f.group} (blueprint ${f.blueprint}, model ${f.model})`,
      [f.task ? [h('h5', {text: 'Task'}), block(f.task, 'user')] : null,
        extras(f, ['group', 'blueprint', 'model', 'task', 'parent_name', 'index'])]];
  },
  stage_enter(f) {
    return ['stage', `Stage ${f.stage}` + (f.visit > 1 ? ` (visit ${f.visit})` : ''), []];
  },
  model_turn(f) {
    const tokens = f.prompt_tokens !== undefined ? `${num(f.prompt_tokens)} + ${num(f.completion_tokens)} tokens` : '';
    return ['assistant', 'Model', [
      f.text ? block(f.text, 'assistant') : h('p', {class: 'quiet', text: f.calls ? '(no text)' : '(no text, no call)'}),
      f.error ? h('p', {class: 'error', text: 'error: ' + f.error}) : null,
      meta(f.model, `iteration ${f.iteration}`, f.calls ? `${f.calls} tool call${f.calls > 1 ? 's' : ''}` : 'no tool call',
        tokens, f.cost_usd ? '$' + f.cost_usd : '', f.attempts > 1 ? `${f.attempts} attempts` : ''),
    ]];
  },
  tool_call(f) {
    return ['tool', h('span', {}, 'Calls ', h('code', {text: f.tool}), ' ', badge('verdict', f.verdict)), [
      block(pretty(f.args), 'args'),
      h('p', {class: 'verdict-line'}, badge('verdict', f.verdict), ` by ${f.layer || '–'}: ${f.reason || ''}`),
      meta(f.call_id, f.keys && f.keys.length ? 'keys ' + f.keys.join(', ') : ''),
    ]];
  },
  prompt(f) {
    const what = f.prompt === 'question' ? 'Asks a person' : `Asks a person to approve ${f.tool}`;
    return ['prompt', what, [
      f.text ? block(f.text, 'question') : null,
      meta(f.call_id, f.keys && f.keys.length ? 'keys ' + f.keys.join(', ') : '', f.deadline ? `deadline tick ${f.deadline}` : ''),
    ]];
  },
  answer(f) {
    return ['answer', h('span', {}, 'Answer ', h('strong', {text: f.answer}), ` by ${f.by} `, badge('verdict', f.verdict)),
      [meta(f.call_id, f.tool)]];
  },
  tool_note(f) {
    return ['note', `Note (${f.fn}) from ${f.tool}`, [
      f.text ? block(f.text, 'note') : null,
      f.err ? h('p', {class: 'error', text: f.err}) : null,
    ]];
  },
  tool_result(f) {
    return ['result', h('span', {}, 'Result of ', h('code', {text: f.tool}), ' ',
      badge('ok', f.ok ? 'ok' : 'error')), [block(f.content || '', f.ok ? 'result' : 'result failed'), meta(f.call_id)]];
  },
  transition(f) {
    const to = f.to ? `stage ${f.to}` : `the end (${f.end})`;
    return ['stage', `Moves from ${f.from} to ${to} on ${f.on}` + (f.when ? ` when ${f.when}` : ''), []];
  },
  terminal(f) {
    return ['end', h('span', {}, 'Ends ', badge('status', f.status), ` in stage ${f.stage}`),
      [f.reason ? block(f.reason, 'note') : null]];
  },
  reap(f) {
    return ['system', `Reaped (${f.status})`, [meta(`${num(f.model_turns)} turns`, `${num(f.tool_calls)} calls`,
      `${num(f.tool_errors)} errors`, f.tokens !== undefined ? `${num(f.tokens)} tokens` : '', f.cost_usd ? '$' + f.cost_usd : '')]];
  },
  message(f) {
    return ['user', `Message from ${f.sender_name || 'agent ' + f.sender} (${f.via})`, [block(f.text || '', 'user')]];
  },
  wait_start(f) {
    return ['system', `Waits for ${f.target_name}`, [meta(f.call_id)]];
  },
  wait_end(f) {
    return ['system', h('span', {}, `${f.target_name} ended `, badge('status', f.status)), [meta(f.call_id)]];
  },
  fanout_start(f) {
    return ['system', `Fans out ${num(f.items)} items to ${f.blueprint} workers`, [meta(f.call_id,
      `at most ${num(f.max_workers)} at once`, `on a worker's failure: ${f.on_worker_failure}`, `mode ${f.mode}`)]];
  },
  worker_end(f) {
    return ['system', h('span', {}, `Worker ${f.worker_name} (item ${f.item}) ended `, badge('status', f.status)), [meta(f.call_id)]];
  },
  merge(f) {
    return ['system', h('span', {}, 'Merges the fan-out ', badge('ok', f.ok ? 'ok' : 'error')), [meta(f.call_id,
      `${num(f.done)} done`, `${num(f.failed)} failed`, `${num(f.killed)} killed`, `${num(f.not_run)} not run`, `${num(f.chars)} bytes`)]];
  },
  kill(f) {
    return ['end', `Killed by ${f.killer_name || 'agent ' + f.killer}`, [
      f.reason ? block(f.reason, 'note') : null,
      f.cascade && f.cascade.length > 1 ? meta('with ' + f.cascade.slice(1).join(', ')) : null,
    ]];
  },
};

// entryItem renders one log entry as a list item.
function entryItem(entry) {
  const f = fieldsOf(entry);
  const r = renderers[entry.kind];
  const [role, title, body] = r ? r(f) : ['system', words(entry.kind), [extras(f, [])]];
  return h('li', {class: `entry role-${role} kind-${entry.kind}`, 'data-seq': entry.seq},
    h('header', {}, h('span', {class: 'entry-title'}, title),
      h('span', {class: 'entry-when', title: `seq ${entry.seq}`, text: `tick ${entry.tick}`})),
    body);
}

// renderLog renders an agent's log, oldest first; dropped counts the older entries the server
// no longer keeps.
export function renderLog(entries, dropped) {
  const list = h('ol', {class: 'conversation', 'aria-label': 'Conversation and events'});
  if (dropped > 0) {
    list.appendChild(h('li', {class: 'entry role-system', text: `${num(dropped)} older events are not kept; the run's trace has them all.`}));
  }
  for (const e of entries) {
    list.appendChild(entryItem(e));
  }
  return list;
}
