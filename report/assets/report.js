// Draws a Warren report's charts from the JSON in #warren-data, with ECharts (inlined before
// this script). Go computed every number; this only lays them out. When every chart has
// rendered, it sets document.body.dataset.ready = "1" and exposes window.warrenReport
// {data, charts}, the ECharts instance of each chart by id, for tests and for the curious.
(function () {
  'use strict';

  var data = JSON.parse(document.getElementById('warren-data').textContent);
  var palette = ['#3b6ea8', '#e07b39', '#3a9a6b', '#c4455a', '#7d5ba6', '#8c6d46', '#d36fb0', '#6b7a8f', '#b5a22a', '#2fa3b5'];
  // The phases, in the order an agent passes through them, then the finished agents.
  var phaseColors = ['#9ecae1', '#4292c6', '#08519c', '#fdae6b', '#e6550d', '#74c476', '#bdbdbd'];
  var font = 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif';

  // num writes a number for a tooltip: whole numbers as they are, others to 4 significant digits.
  function num(v) {
    if (v === null || v === undefined) { return '–'; }
    if (Number.isInteger(v)) { return v.toLocaleString('en-US'); }
    return Number(v.toPrecision(4)).toLocaleString('en-US', {maximumFractionDigits: 10});
  }

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c];
    });
  }

  // text makes a formatter that shows s as it is: a string formatter would read {a}, {b}, {c}
  // in a stage name or a condition as ECharts templates.
  function text(s) {
    return function () { return s; };
  }

  function base(extra) {
    var o = {
      animation: false,
      color: palette,
      textStyle: {fontFamily: font},
      grid: {left: 70, right: 70, top: 50, bottom: 60},
      tooltip: {trigger: 'axis', valueFormatter: num}
    };
    for (var k in extra) { o[k] = extra[k]; }
    return o;
  }

  function xTicks(d, ticks) {
    return {
      type: 'category', data: ticks.map(String), boundaryGap: false,
      name: d.bucket > 1 ? 'tick (last of each ' + d.bucket + ' ticks)' : 'tick',
      nameLocation: 'middle', nameGap: 32
    };
  }

  function yValue(name, extra) {
    var o = {type: 'value', name: name, nameTextStyle: {align: 'center'}};
    for (var k in extra) { o[k] = extra[k]; }
    return o;
  }

  var builders = {
    phases: function (d) {
      return base({
        color: phaseColors,
        legend: {top: 0},
        xAxis: xTicks(d, d.ticks),
        yAxis: yValue('agents', {minInterval: 1}),
        series: d.series.map(function (s) {
          return {name: s.name, type: 'line', stack: 'agents', step: 'end', areaStyle: {opacity: 0.85}, symbol: 'none',
            lineStyle: {width: 0.5}, emphasis: {focus: 'series'}, data: s.data};
        })
      });
    },

    throughput: function (d) {
      var unit = d.bucket > 1 ? ' per tick (mean)' : ' per tick';
      return base({
        legend: {top: 0},
        xAxis: xTicks(d, d.ticks),
        yAxis: [yValue('events' + unit), yValue('agents finished' + unit, {splitLine: {show: false}})],
        series: [
          {name: 'trace events', type: 'line', symbol: 'none', data: d.events},
          {name: 'agents finished', type: 'bar', yAxisIndex: 1, barMaxWidth: 18, data: d.finished}
        ]
      });
    },

    wall: function (d) {
      return base({
        legend: {top: 0},
        xAxis: {type: 'category', data: d.ends, name: 'wall time since the run started (s), at the end of each ' + num(d.width_ms) + ' ms',
          nameLocation: 'middle', nameGap: 32},
        yAxis: [yValue('events per second'), yValue('agents finished per second', {splitLine: {show: false}})],
        series: [
          {name: 'trace events', type: 'line', symbol: 'none', data: d.events},
          {name: 'agents finished', type: 'bar', yAxisIndex: 1, barMaxWidth: 18, data: d.finished}
        ]
      });
    },

    graph: function (d) {
      // Nodes sit at the layout's coordinates on hidden value axes, so that a node keeps its
      // size in pixels whatever the chart's shape; the y axis points down, as the layout's.
      var index = {};
      var xs = [], ys = [];
      d.nodes.forEach(function (n, i) { index[n.id] = i; xs.push(n.x); ys.push(n.y); });
      var most = 1;
      d.links.forEach(function (l) { most = Math.max(most, l.count); });
      var nodes = d.nodes.map(function (n) {
        var end = n.kind === 'end';
        var label = end || !d.traced ? n.label : n.label + '\n' + n.visits + (n.visits === 1 ? ' visit' : ' visits');
        var color = end ? (n.label === 'done' ? '#3a9a6b' : '#c4455a') : '#ffffff';
        return {
          name: n.id, value: [n.x, n.y],
          symbol: end ? 'circle' : 'roundRect', symbolSize: end ? 54 : [128, 50],
          itemStyle: {color: color, borderColor: end ? color : '#3b6ea8', borderWidth: n.kind === 'entry' ? 3 : 1.2},
          label: {
            show: true, color: end ? '#ffffff' : '#1f2933', lineHeight: 17, fontSize: 12.5,
            fontWeight: n.kind === 'entry' ? 'bold' : 'normal', formatter: text(label)
          },
          tooltip: {formatter: text(end ? 'ends the agent ' + esc(n.label) : esc(n.label) + (d.traced ? ': entered ' + n.visits + ' times' : ''))}
        };
      });
      var links = d.links.map(function (l) {
        var taken = l.count > 0 || !d.traced;
        return {
          source: index[l.source], target: index[l.target], value: l.count,
          lineStyle: {
            curveness: l.curveness, width: l.count > 0 ? 1.5 + 4 * l.count / most : 1.2, type: taken ? 'solid' : 'dashed',
            color: l.extra && d.listed ? '#c4455a' : (taken ? '#3b6ea8' : '#a3acb9'), opacity: 0.9
          },
          label: {show: true, formatter: l.label, fontSize: 11, lineHeight: 14, color: taken ? '#1f2933' : '#5f6b7a', textBorderColor: '#ffffff', textBorderWidth: 3},
          tooltip: {formatter: text(esc(l.source.replace(/^s:/, '')) + ' → ' + esc(l.target.replace(/^(s|end):/, '')) + '<br>' +
            l.edges.map(function (e) {
              return 'on ' + esc(e.on) + (e.when ? ' when ' + esc(e.when) : '') + (d.traced ? ': taken ' + e.count + ' times' : '') +
                (e.extra && d.listed ? ' (not in graph.json)' : '');
            }).join('<br>'))}
        };
      });
      var pad = function (lo, hi, margin) { return {min: lo - margin, max: hi + margin}; };
      var x = pad(Math.min.apply(null, xs), Math.max.apply(null, xs), 110);
      var y = pad(Math.min.apply(null, ys), Math.max.apply(null, ys), 70);
      return {
        animation: false, textStyle: {fontFamily: font}, tooltip: {},
        // Loops and skipping edges curve above the top row: room for them and their labels.
        grid: {left: 20, right: 20, top: d.links.some(function (l) { return l.curveness !== 0; }) ? 70 : 20, bottom: 20},
        xAxis: {type: 'value', show: false, min: x.min, max: x.max},
        yAxis: {type: 'value', show: false, inverse: true, min: y.min, max: y.max},
        series: [{
          type: 'graph', coordinateSystem: 'cartesian2d', edgeSymbol: ['none', 'arrow'], edgeSymbolSize: 10,
          data: nodes, links: links, emphasis: {focus: 'adjacency'}, edgeLabel: {show: true}
        }]
      };
    },

    box: function (d) {
      return base({
        tooltip: {trigger: 'item', formatter: function (p) {
          var b = d.boxes[p.dataIndex];
          return esc(d.stages[p.dataIndex]) + '<br>visits ' + num(b.n) + '<br>min ' + num(b.min) + ', 25% ' + num(b.q1) +
            '<br>median ' + num(b.median) + ', 75% ' + num(b.q3) + '<br>max ' + num(b.max) + ', mean ' + num(b.mean);
        }},
        xAxis: {type: 'category', data: d.stages, name: 'stage', nameLocation: 'middle', nameGap: 32, axisLabel: {interval: 0, hideOverlap: true}},
        yAxis: yValue(d.unit === 'ticks' ? 'visit length (ticks)' : 'visit length (ms)'),
        series: [{name: 'visit length', type: 'boxplot', itemStyle: {color: '#dbe7f3', borderColor: '#3b6ea8'},
          data: d.boxes.map(function (b) { return [b.min, b.q1, b.median, b.q3, b.max]; })}]
      });
    },

    hist: function (d, sel) {
      var h = d.hists[sel];
      return base({
        tooltip: {trigger: 'axis', formatter: function (ps) {
          return esc(d.stages[sel]) + ': ' + esc(ps[0].name) + ' ' + d.unit + '<br>' + num(ps[0].value) + ' visits';
        }},
        xAxis: {type: 'category', data: h.labels, name: 'visit length (' + d.unit + ')', nameLocation: 'middle', nameGap: 32},
        yAxis: yValue('visits', {minInterval: 1}),
        series: [{name: d.stages[sel], type: 'bar', barCategoryGap: '8%', data: h.counts}]
      });
    },

    tokens: function (d) {
      var series = d.models.map(function (m) {
        return {name: m.name, type: 'bar', stack: 'tokens', barMaxWidth: 24, data: m.data};
      });
      var axes = [yValue('tokens per tick' + (d.bucket > 1 ? ' (summed)' : ''))];
      if (d.cost) {
        axes.push(yValue('cost so far (USD)', {splitLine: {show: false}}));
        series.push({name: 'cost so far (USD)', type: 'line', yAxisIndex: 1, step: 'end', symbol: 'none', color: '#1f2933', data: d.cost});
      }
      return base({legend: {top: 0}, xAxis: xTicks(d, d.ticks), yAxis: axes, series: series});
    },

    sweep: function (d, sel) {
      var series = [];
      d.series.forEach(function (s, i) {
        var color = palette[i % palette.length];
        var pts = s.points[sel];
        series.push({name: s.name, type: 'line', color: color, symbol: 'circle', symbolSize: 8, connectNulls: false, z: 3,
          data: pts.map(function (p) { return p ? p.mean : null; })});
        var bars = [];
        pts.forEach(function (p, j) { if (p) { bars.push([j, p.min, p.max]); } });
        series.push({name: s.name, type: 'custom', color: color, z: 2, encode: {x: 0, y: [1, 2]}, data: bars,
          renderItem: errorBar, tooltip: {show: false}});
      });
      return base({
        legend: {top: 0, data: d.series.map(function (s) { return s.name; })},
        tooltip: {trigger: 'axis', formatter: function (ps) {
          var lines = [esc(d.param) + ' = ' + esc(d.values[ps[0].dataIndex])];
          ps.forEach(function (p) {
            var pt = d.series[Math.floor(p.seriesIndex / 2)].points[sel][p.dataIndex];
            if (p.seriesType === 'line' && pt) {
              lines.push(p.marker + esc(p.seriesName) + ': mean ' + num(pt.mean) + ', min ' + num(pt.min) + ', max ' + num(pt.max) +
                ', sd ' + num(pt.sd) + ' (n ' + pt.n + ')');
            }
          });
          return lines.join('<br>');
        }},
        xAxis: {type: 'category', data: d.values, name: d.param, nameLocation: 'middle', nameGap: 32},
        yAxis: yValue(d.metrics[sel], {scale: true}),
        series: series
      });
    }
  };

  // errorBar draws a vertical bar from a point's min to its max, with caps.
  function errorBar(params, api) {
    var lo = api.coord([api.value(0), api.value(1)]);
    var hi = api.coord([api.value(0), api.value(2)]);
    var cap = 6;
    var style = {stroke: api.visual('color'), lineWidth: 1.6};
    return {type: 'group', children: [
      {type: 'line', shape: {x1: lo[0], y1: lo[1], x2: hi[0], y2: hi[1]}, style: style},
      {type: 'line', shape: {x1: lo[0] - cap, y1: lo[1], x2: lo[0] + cap, y2: lo[1]}, style: style},
      {type: 'line', shape: {x1: hi[0] - cap, y1: hi[1], x2: hi[0] + cap, y2: hi[1]}, style: style}
    ]};
  }

  var charts = {};
  var waiting = data.charts.length;
  function rendered() {
    waiting--;
    if (waiting === 0) { document.body.dataset.ready = '1'; }
  }

  data.charts.forEach(function (c) {
    var el = document.getElementById('chart-' + c.id);
    var select = document.getElementById('select-' + c.id);
    var chart = echarts.init(el, null, {renderer: 'canvas'});
    var first = true;
    chart.on('finished', function () {
      if (first) { first = false; rendered(); }
    });
    var draw = function () {
      chart.setOption(builders[c.type](c.data, select ? Number(select.value) : 0), {notMerge: true});
    };
    if (select) { select.addEventListener('change', draw); }
    draw();
    charts[c.id] = chart;
  });
  window.warrenReport = {data: data, charts: charts};
  if (waiting === 0) { document.body.dataset.ready = '1'; }
  window.addEventListener('resize', function () {
    Object.keys(charts).forEach(function (id) { charts[id].resize(); });
  });
})();
