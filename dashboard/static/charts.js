// The run's charts, drawn with ECharts (echarts.min.js, loaded before the modules): agents by
// phase over ticks, throughput, and the stage graph with its counts. Data comes from /metrics;
// labels are given as functions, so that a stage named "{a}" is not read as an ECharts template,
// and tooltips render as rich text, never as HTML.

import {words} from './dom.js';

// The phases in the order an agent passes them (runview.PhaseNames), terminal last.
const PHASE_COLORS = ['#9ecae1', '#4292c6', '#08519c', '#fdae6b', '#e6550d', '#74c476', '#bdbdbd'];
const PALETTE = ['#3b6ea8', '#e07b39', '#3a9a6b', '#c4455a', '#7d5ba6', '#8c6d46', '#d36fb0', '#6b7a8f'];
const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif';

function base(extra) {
  return {
    animation: false,
    color: PALETTE,
    textStyle: {fontFamily: FONT},
    grid: {left: 60, right: 60, top: 64, bottom: 44},
    tooltip: {trigger: 'axis', renderMode: 'richText'},
    ...extra,
  };
}

// legend is a compact legend that scrolls when the chart is narrow.
function legend() {
  return {top: 0, type: 'scroll', itemWidth: 14, itemHeight: 8, itemGap: 8, textStyle: {fontSize: 11}};
}

function tickAxis() {
  return {type: 'value', name: 'tick', nameLocation: 'middle', nameGap: 28, min: 'dataMin', max: 'dataMax', minInterval: 1};
}

// phaseOption is the stacked area of agents by phase: phases names them (counts.by_phase's
// order, which is each sample's phases order).
export function phaseOption(phases, series) {
  return base({
    color: PHASE_COLORS,
    legend: legend(),
    xAxis: tickAxis(),
    yAxis: {type: 'value', name: 'agents', minInterval: 1},
    series: phases.map((name, i) => ({
      name: words(name), type: 'line', stack: 'agents', step: 'end', symbol: 'none',
      areaStyle: {opacity: 0.85}, lineStyle: {width: 0.5},
      data: series.map((s) => [s.tick, s.phases[i]]),
    })),
  });
}

// rates turns counts so far into per-tick rates: a sample that covers several ticks (the series
// halves its resolution on long runs, and ticks without events have no sample) gives the mean.
function rates(series, key) {
  const out = [];
  let prev = null;
  for (const s of series) {
    const dt = prev ? Math.max(1, s.tick - prev.tick) : 1;
    out.push([s.tick, (s[key] - (prev ? prev[key] : 0)) / dt]);
    prev = s;
  }
  return out;
}

// throughputOption charts trace events per tick (left axis) and model turns and tool calls per
// tick (right axis).
export function throughputOption(series) {
  return base({
    legend: legend(),
    xAxis: tickAxis(),
    yAxis: [
      {type: 'value', name: 'events / tick'},
      {type: 'value', name: 'turns, calls / tick', splitLine: {show: false}},
    ],
    series: [
      {name: 'trace events', type: 'line', symbol: 'none', data: rates(series, 'events')},
      {name: 'model turns', type: 'line', symbol: 'none', yAxisIndex: 1, data: rates(series, 'model_turns')},
      {name: 'tool calls', type: 'line', symbol: 'none', yAxisIndex: 1, lineStyle: {type: 'dashed'}, data: rates(series, 'tool_calls')},
    ],
  });
}

// layout places each blueprint's stages in columns by their distance from its first stage
// (breadth first along the traced edges), end nodes after them, one blueprint under another.
function layout(graph) {
  const byBlueprint = new Map();
  const bp = (name) => {
    if (!byBlueprint.has(name)) {
      byBlueprint.set(name, {nodes: new Map(), out: new Map()});
    }
    return byBlueprint.get(name);
  };
  for (const s of graph.stages) {
    bp(s.blueprint).nodes.set('s:' + s.stage, {name: s.stage, visits: s.visits, end: false});
  }
  for (const e of graph.edges) {
    const b = bp(e.blueprint);
    const to = e.to ? 's:' + e.to : 'end:' + e.end;
    for (const [id, name] of [['s:' + e.from, e.from], [to, e.to || e.end]]) {
      if (!b.nodes.has(id)) {
        b.nodes.set(id, {name, visits: null, end: id.startsWith('end:')});
      }
    }
    if (!b.out.has('s:' + e.from)) {
      b.out.set('s:' + e.from, []);
    }
    b.out.get('s:' + e.from).push(to);
  }
  const pos = new Map();
  let top = 0;
  for (const [name, b] of byBlueprint) {
    const depth = new Map();
    const ids = [...b.nodes.keys()];
    const queue = ids.length ? [ids[0]] : [];
    if (queue.length) {
      depth.set(ids[0], 0);
    }
    while (queue.length) {
      const id = queue.shift();
      for (const next of b.out.get(id) || []) {
        if (!depth.has(next)) {
          depth.set(next, depth.get(id) + 1);
          queue.push(next);
        }
      }
    }
    let maxDepth = Math.max(0, ...depth.values());
    for (const id of ids) {
      if (!depth.has(id)) {
        depth.set(id, ++maxDepth);
      }
    }
    const rows = new Map();
    for (const id of ids) {
      const d = b.nodes.get(id).end ? maxDepth + 1 : depth.get(id);
      const row = rows.get(d) || 0;
      rows.set(d, row + 1);
      pos.set(name + '\u0000' + id, {x: d * 190, y: top + row * 90});
    }
    top += Math.max(1, ...rows.values()) * 90 + 50;
  }
  return {byBlueprint, pos};
}

// graphOption draws the stage graph as traced: a node per stage with its visits, an end node per
// way out, an edge per (from, to, on, when) with how often it was taken. Blueprints are the
// categories, so two that name a stage alike stay apart.
export function graphOption(graph) {
  if (!graph.stages.length && !graph.edges.length) {
    // ECharts cannot lay out a graph of no node: say so instead.
    return base({title: {text: 'No agent has entered a stage yet.', left: 'center', top: 'middle',
      textStyle: {fontWeight: 'normal', fontSize: 14, color: '#5d6878'}}, series: []});
  }
  const {byBlueprint, pos} = layout(graph);
  const blueprints = [...byBlueprint.keys()];
  const maxVisits = Math.max(1, ...graph.stages.map((s) => s.visits));
  const nodes = [];
  for (const [name, b] of byBlueprint) {
    for (const [id, n] of b.nodes) {
      const key = name + '\u0000' + id;
      const label = n.end ? 'end: ' + n.name : n.name + '\n' + (n.visits ?? 0) + ' visits';
      const tip = (blueprints.length > 1 ? name + ' · ' : '') + label.replace('\n', ' · ');
      nodes.push({
        id: key, name: key, category: blueprints.indexOf(name), ...pos.get(key),
        symbol: n.end ? 'roundRect' : 'circle',
        symbolSize: n.end ? [70, 26] : 26 + 30 * Math.sqrt((n.visits || 0) / maxVisits),
        itemStyle: n.end ? {color: n.name === 'done' ? '#74c476' : '#c4455a'} : undefined,
        label: {show: true, position: n.end ? 'inside' : 'bottom', formatter: () => label},
        tooltip: {formatter: () => tip},
        value: n.visits ?? 0,
      });
    }
  }
  // Two invisible corners: ECharts cannot fit a graph whose nodes all share a row or a column
  // (its box has no width or no height), as a chain of stages or a single stage does.
  const xs = nodes.map((n) => n.x);
  const ys = nodes.map((n) => n.y);
  for (const [i, x, y] of [[0, Math.min(...xs) - 60, Math.min(...ys) - 40], [1, Math.max(...xs) + 60, Math.max(...ys) + 40]]) {
    nodes.push({id: 'corner-' + i, name: 'corner-' + i, x, y, symbolSize: 0, label: {show: false},
      tooltip: {show: false}, emphasis: {disabled: true}, itemStyle: {opacity: 0}});
  }
  const links = graph.edges.map((e) => {
    const source = e.blueprint + '\u0000s:' + e.from;
    const target = e.blueprint + '\u0000' + (e.to ? 's:' + e.to : 'end:' + e.end);
    const text = (e.on === 'done' ? '' : e.on + ' ') + '×' + e.count;
    const tip = `${e.from} → ${e.to || 'end: ' + e.end} on ${e.on}${e.when ? ' when ' + e.when : ''}: ${e.count}`;
    return {source, target, value: e.count, label: {show: true, formatter: () => text}, tooltip: {formatter: () => tip}};
  });
  return base({
    tooltip: {trigger: 'item', renderMode: 'richText'},
    legend: blueprints.length > 1 ? {top: 0, data: blueprints} : undefined,
    grid: undefined,
    series: [{
      type: 'graph', layout: 'none', roam: true, autoCurveness: true, edgeSymbol: ['none', 'arrow'], edgeSymbolSize: 8,
      categories: blueprints.map((name) => ({name})),
      lineStyle: {color: '#8895a7', width: 1.5, opacity: 0.9}, edgeLabel: {fontSize: 11},
      emphasis: {focus: 'adjacency'}, data: nodes, links,
    }],
  });
}

// Charts keeps the run's three chart instances and redraws them from /metrics. They are made on
// the first update, when their boxes are on screen (ECharts measures them). When ECharts did not
// load, each chart's box says so and the rest of the page works on.
export class Charts {
  constructor(els) {
    this.els = els;
    this.instances = {};
    this.graphKey = '';
  }

  // ready makes the instances once; false when ECharts is missing.
  ready() {
    if (this.instances.phases) {
      return true;
    }
    if (typeof window.echarts === 'undefined') {
      for (const el of Object.values(this.els)) {
        el.textContent = 'Charts are unavailable: echarts.min.js did not load.';
      }
      return false;
    }
    for (const [name, el] of Object.entries(this.els)) {
      this.instances[name] = window.echarts.init(el, null, {renderer: 'canvas'});
    }
    // A box of no width or height (a layout in between) is skipped: ECharts' graph cannot fit
    // itself into one, and the next size comes soon.
    const byEl = new Map(Object.entries(this.els).map(([name, el]) => [el, this.instances[name]]));
    const resize = new ResizeObserver((entries) => {
      for (const e of entries) {
        if (e.contentRect.width > 0 && e.contentRect.height > 0) {
          byEl.get(e.target).resize();
        }
      }
    });
    byEl.forEach((_, el) => resize.observe(el));
    return true;
  }

  // update draws the metrics; the graph is redrawn only when it changed, so its zoom stays put.
  update(metrics) {
    if (!this.ready()) {
      return;
    }
    const c = this.instances;
    const phases = metrics.counts.by_phase.map((p) => p.name);
    c.phases.setOption(phaseOption(phases, metrics.series), {notMerge: true});
    c.throughput.setOption(throughputOption(metrics.series), {notMerge: true});
    const key = JSON.stringify(metrics.graph);
    if (key !== this.graphKey && this.els.graph.clientWidth > 0) {
      this.graphKey = key;
      c.graph.setOption(graphOption(metrics.graph), {notMerge: true});
    }
  }

  // clear empties the charts when another run is shown.
  clear() {
    this.graphKey = '';
    Object.values(this.instances).forEach((c) => c.clear());
  }
}
