(function () {
  'use strict';
  var errorBox = document.getElementById('kvsim-errors');
  function fail(message) { errorBox.hidden = false; errorBox.textContent += message + '\n'; }
  window.addEventListener('error', function (e) { fail('error: ' + e.message); });
  var NS = 'http://www.w3.org/2000/svg';
  var PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
                 '#ff9da7', '#9c755f', '#bab0ac'];
  var W = 560, H = 320, M = {l: 64, r: 16, t: 52, b: 44};

  function node(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, attrs) {
    var t = node('text', Object.assign({x: x, y: y}, attrs || {}), parent);
    t.textContent = s;
    return t;
  }
  function html(tag, parent, content) {
    var e = document.createElement(tag);
    if (content !== undefined) e.textContent = content;
    if (parent) parent.appendChild(e);
    return e;
  }
  function fmt(v) {
    if (v === null || v === undefined || !isFinite(v)) return '-';
    var a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toPrecision(3) + 'G';
    if (a >= 1e6) return (v / 1e6).toPrecision(3) + 'M';
    if (a >= 1e4) return (v / 1e3).toPrecision(3) + 'k';
    if (a >= 100) return v.toFixed(0);
    if (a === 0) return '0';
    return v.toPrecision(3).replace(/\.?0+$/, '');
  }
  function pct(v) { return (100 * v).toFixed(1) + '%'; }
  function ticks(lo, hi, n) {
    if (!(hi > lo)) hi = lo + 1;
    var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / n)));
    var r = (hi - lo) / n / step;
    step *= r >= 7.5 ? 10 : r >= 3.5 ? 5 : r >= 1.5 ? 2 : 1;
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
    return out;
  }
  function card(parent) { var d = html('div', parent); d.className = 'card'; return d; }

  // An SVG with a title, axes, grid and tick labels; returns the scales.
  function frame(parent, o) {
    var svg = node('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H}, card(parent));
    var pw = W - M.l - M.r, ph = H - M.t - M.b;
    var x = function (v) { return M.l + (o.xmax > o.xmin ? (v - o.xmin) / (o.xmax - o.xmin) : 0) * pw; };
    var y = function (v) { return M.t + ph - (o.ymax > o.ymin ? (v - o.ymin) / (o.ymax - o.ymin) : 0) * ph; };
    text(svg, M.l, 16, o.title, {'class': 'title'});
    ticks(o.ymin, o.ymax, 5).forEach(function (v) {
      node('line', {x1: M.l, x2: M.l + pw, y1: y(v), y2: y(v), stroke: '#e6e6e6'}, svg);
      text(svg, M.l - 6, y(v) + 4, (o.yfmt || fmt)(v), {'text-anchor': 'end'});
    });
    if (o.categories) {
      o.categories.forEach(function (c, i) {
        // "contiguous-max / vllm" on two lines: long labels of neighbours must not overlap.
        var cx = M.l + (i + 0.5) * pw / o.categories.length;
        c.split(' / ').forEach(function (part, j) {
          text(svg, cx, H - M.b + 16 + 13 * j, part, {'text-anchor': 'middle'});
        });
      });
    } else {
      ticks(o.xmin, o.xmax, 6).forEach(function (v) {
        node('line', {x1: x(v), x2: x(v), y1: M.t, y2: M.t + ph, stroke: '#f0f0f0'}, svg);
        text(svg, x(v), H - M.b + 16, (o.xfmt || fmt)(v), {'text-anchor': 'middle'});
      });
    }
    node('rect', {x: M.l, y: M.t, width: pw, height: ph, fill: 'none', stroke: '#999'}, svg);
    if (o.xlabel) text(svg, M.l + pw / 2, H - 8, o.xlabel, {'text-anchor': 'middle'});
    if (o.ylabel) {
      text(svg, 14, M.t + ph / 2, o.ylabel,
           {'text-anchor': 'middle', transform: 'rotate(-90 14 ' + (M.t + ph / 2) + ')'});
    }
    return {svg: svg, x: x, y: y, pw: pw, ph: ph};
  }
  // Above the plot, under the title; wraps to a second row when it runs out of width.
  function legend(f, names, colors) {
    var x = M.l, y = 24;
    names.forEach(function (n, i) {
      var w = 22 + 6.2 * n.length;
      if (x > M.l && x + w > W - M.r) { x = M.l; y += 14; }
      node('rect', {x: x, y: y, width: 10, height: 10, fill: colors[i]}, f.svg);
      text(f.svg, x + 14, y + 9, n);
      x += w;
    });
  }
  function lineChart(parent, o) {
    var xmax = 0, ymax = o.ymax || 0;
    o.series.forEach(function (s) {
      s.points.forEach(function (p) { xmax = Math.max(xmax, p[0]); if (!o.ymax) ymax = Math.max(ymax, p[1]); });
    });
    (o.marks || []).forEach(function (m) { xmax = Math.max(xmax, m.x); });
    if (!(xmax > 0)) xmax = 1;
    if (!(ymax > 0)) ymax = 1;
    var f = frame(parent, {title: o.title, xlabel: o.xlabel, ylabel: o.ylabel, xmin: 0,
                           xmax: xmax, ymin: 0, ymax: ymax, yfmt: o.yfmt});
    o.series.forEach(function (s, i) {
      if (!s.points.length) return;
      var d = s.points.map(function (p, j) { return (j ? 'L' : 'M') + f.x(p[0]).toFixed(1) + ' ' + f.y(p[1]).toFixed(1); }).join('');
      node('path', {d: d, fill: 'none', stroke: PALETTE[i % PALETTE.length], 'stroke-width': 2}, f.svg);
    });
    (o.marks || []).forEach(function (m) {
      node('line', {x1: f.x(m.x), x2: f.x(m.x), y1: M.t, y2: M.t + f.ph, stroke: '#b00',
                    'stroke-dasharray': '4 3'}, f.svg);
      text(f.svg, f.x(m.x) - 4, M.t + f.ph - 6, m.label, {'text-anchor': 'end', fill: '#b00'});
    });
    legend(f, o.series.map(function (s) { return s.name; }),
           o.series.map(function (s, i) { return PALETTE[i % PALETTE.length]; }));
  }
  function stackedArea(parent, o) {
    var n = o.x.length, ymax = 0;
    for (var i = 0; i < n; ++i) {
      var sum = 0;
      o.layers.forEach(function (l) { sum += l.values[i]; });
      ymax = Math.max(ymax, sum);
    }
    var f = frame(parent, {title: o.title, xlabel: o.xlabel, ylabel: o.ylabel, xmin: o.x[0] || 0,
                           xmax: o.x[n - 1] || 1, ymin: 0, ymax: ymax || 1, yfmt: o.yfmt});
    var base = o.x.map(function () { return 0; });
    o.layers.forEach(function (l) {
      var top = base.map(function (b, i) { return b + l.values[i]; });
      var d = '';
      for (var i = 0; i < n; ++i) d += (i ? 'L' : 'M') + f.x(o.x[i]).toFixed(1) + ' ' + f.y(top[i]).toFixed(1);
      for (var j = n - 1; j >= 0; --j) d += 'L' + f.x(o.x[j]).toFixed(1) + ' ' + f.y(base[j]).toFixed(1);
      node('path', {d: d + 'Z', fill: l.color, stroke: 'none'}, f.svg);
      base = top;
    });
    legend(f, o.layers.map(function (l) { return l.name; }), o.layers.map(function (l) { return l.color; }));
  }
  // groups: [{name, values[category], color}]; stacked or side by side within a category.
  function bars(parent, o) {
    var nc = o.categories.length, ymax = o.ymax || 0;
    if (!o.ymax) {
      for (var c = 0; c < nc; ++c) {
        var sum = 0;
        o.groups.forEach(function (g) { sum = o.stacked ? sum + g.values[c] : Math.max(sum, g.values[c]); });
        ymax = Math.max(ymax, sum);
      }
    }
    var f = frame(parent, {title: o.title, ylabel: o.ylabel, xmin: 0, xmax: 1, ymin: 0,
                           ymax: (ymax || 1) * (o.ymax ? 1 : 1.15), categories: o.categories,
                           yfmt: o.yfmt});
    var slot = f.pw / nc, ng = o.groups.length;
    for (var c2 = 0; c2 < nc; ++c2) {
      var acc = 0;
      o.groups.forEach(function (g, gi) {
        var v = g.values[c2] || 0, color = g.color || PALETTE[gi % PALETTE.length];
        var bw = o.stacked ? slot * 0.6 : slot * 0.8 / ng;
        var x0 = M.l + c2 * slot + (o.stacked ? slot * 0.2 : slot * 0.1 + gi * bw);
        var y1 = f.y(acc + v), y0 = f.y(acc);
        node('rect', {x: x0, y: y1, width: bw, height: Math.max(0, y0 - y1), fill: color}, f.svg);
        if (o.labels && (!o.stacked || v > 0.04 * ymax)) {
          text(f.svg, x0 + bw / 2, o.stacked ? (y0 + y1) / 2 + 4 : y1 - 3, (o.yfmt || fmt)(v),
               {'text-anchor': 'middle', fill: o.stacked ? '#fff' : '#333'});
        }
        if (o.stacked) acc += v;
      });
    }
    if (ng > 1) legend(f, o.groups.map(function (g) { return g.name; }),
                       o.groups.map(function (g, gi) { return g.color || PALETTE[gi % PALETTE.length]; }));
  }
  function scatter(parent, o) {
    var xmax = 0, ymax = 0;
    o.points.forEach(function (p) { xmax = Math.max(xmax, p.x); ymax = Math.max(ymax, p.y); });
    var f = frame(parent, {title: o.title, xlabel: o.xlabel, ylabel: o.ylabel, xmin: 0,
                           xmax: (xmax || 1) * 1.1, ymin: 0, ymax: (ymax || 1) * 1.15});
    if (o.front.length > 1) {
      var d = '';
      o.front.forEach(function (p, i) {
        d += (i ? 'H' + f.x(p.x).toFixed(1) + 'V' : 'M' + f.x(p.x).toFixed(1) + ' ') + f.y(p.y).toFixed(1);
      });
      node('path', {d: d, fill: 'none', stroke: PALETTE[2], 'stroke-width': 2}, f.svg);
    }
    o.points.forEach(function (p) {
      var c = node('circle', {cx: f.x(p.x), cy: f.y(p.y), r: p.front ? 6 : 4,
                              fill: p.front ? PALETTE[2] : PALETTE[0], 'fill-opacity': 0.8}, f.svg);
      node('title', {}, c).textContent = p.label;
      var right = f.x(p.x) > W * 0.65;  // labels near the right edge run leftwards
      if (p.front) {
        text(f.svg, f.x(p.x) + (right ? -8 : 8), f.y(p.y) - 6, p.short || p.label,
             {'text-anchor': right ? 'end' : 'start'});
      }
    });
    legend(f, ['Pareto front (cheaper and more capable than the rest)', 'other deployments'],
           [PALETTE[2], PALETTE[0]]);
  }
  function table(parent, headers, rows, frontRows) {
    var t = html('table', card(parent)), tr = html('tr', t);
    headers.forEach(function (h) { html('th', tr, h); });
    rows.forEach(function (r, i) {
      var row = html('tr', t);
      if (frontRows && frontRows[i]) row.className = 'front';
      r.forEach(function (c) { html('td', row, c); });
    });
  }
  function section(title) {
    html('h2', document.getElementById('charts'), title);
    var g = html('div', document.getElementById('charts'));
    g.className = 'grid';
    return g;
  }
  var MEMORY = [['token_states', 'token states', '#4e79a7'], ['reservation', 'reservation', '#f28e2b'],
                ['internal_fragmentation', 'internal fragmentation', '#e15759'],
                ['external_fragmentation', 'external fragmentation', '#b07aa1'],
                ['free', 'free', '#cfcfcf']];
  function ms(v) { return fmt(v * 1000); }
  function cdfChart(parent, title, series, slo) {
    lineChart(parent, {title: title, xlabel: 'latency (ms)', ylabel: 'fraction of requests',
                       ymax: 1, yfmt: pct, marks: slo ? [{x: slo * 1000, label: 'SLO'}] : [],
                       series: series.map(function (s) {
                         return {name: s.name, points: s.points.map(function (p) { return [p[0] * 1000, p[1]]; })};
                       })});
  }

  function drawSimulate(d) {
    var s = d.summary, slo = s.slo || {};
    var g = section('Summary');
    table(g, ['metric', 'value'], [
      ['requests completed / rejected / unfinished', s.requests_completed + ' / ' + s.requests_rejected + ' / ' + s.requests_unfinished],
      ['throughput (req/s)', fmt(s.throughput_rps)], ['output tokens/s', fmt(s.output_tokens_per_s)],
      ['goodput (req/s)', fmt(s.goodput_rps)], ['SLO attainment', pct(s.slo_attainment)],
      ['TTFT p50 / p99 (ms)', ms(s.ttft_s.p50) + ' / ' + ms(s.ttft_s.p99)],
      ['TPOT p50 / p99 (ms)', ms(s.tpot_s.p50) + ' / ' + ms(s.tpot_s.p99)],
      ['E2E p50 / p99 (s)', fmt(s.e2e_s.p50) + ' / ' + fmt(s.e2e_s.p99)],
      ['preemptions', String(s.preemptions)], ['saturation', s.saturation.verdict]]);
    g = section('Latency CDFs');
    cdfChart(g, 'TTFT', [{name: 'TTFT', points: d.cdfs.ttft}], slo.ttft_s);
    cdfChart(g, 'TPOT', [{name: 'TPOT', points: d.cdfs.tpot}], slo.tpot_s);
    cdfChart(g, 'E2E', [{name: 'E2E', points: d.cdfs.e2e}], slo.e2e_s);
    g = section('KV cache memory (per GPU)');
    var tl = d.timeline;
    if (tl.t.length > 1) {
      var gb = function (a) { return a.map(function (v) { return v / 1e9; }); };
      stackedArea(g, {title: 'KV memory over time', xlabel: 'simulated time (s)', ylabel: 'GB per GPU',
                      x: tl.t, layers: MEMORY.map(function (m) {
                        return {name: m[1], values: gb(tl[m[0]]), color: m[2]};
                      })});
    } else {
      html('p', g, 'No timeline samples (the run was too short).').className = 'note';
    }
    bars(g, {title: 'Time-weighted breakdown of the KV budget', ylabel: 'share of KV slots',
             categories: ['this run'], stacked: true, labels: true, ymax: 1, yfmt: pct,
             groups: MEMORY.map(function (m) { return {name: m[1], values: [d.fractions[m[0]]], color: m[2]}; })});
    g = section('Load');
    if (tl.t.length > 1) {
      lineChart(g, {title: 'Running and waiting requests', xlabel: 'simulated time (s)', ylabel: 'requests',
                    series: [{name: 'running', points: tl.t.map(function (t, i) { return [t, tl.running[i]]; })},
                             {name: 'waiting', points: tl.t.map(function (t, i) { return [t, tl.waiting[i]]; })}]});
    }
    bars(g, {title: 'Requests completed per replica', ylabel: 'requests', labels: true,
             categories: d.replicas.map(function (v, i) { return 'replica ' + i; }),
             groups: [{name: 'completed', values: d.replicas}]});
  }

  function drawCompare(d) {
    var labels = d.runs.map(function (r) { return r.label; });
    var g = section('KV memory breakdown (PagedAttention Figure 2 view)');
    bars(g, {title: 'Share of the KV budget, time-weighted', ylabel: 'share of KV slots', categories: labels,
             stacked: true, labels: true, ymax: 1, yfmt: pct,
             groups: MEMORY.map(function (m) {
               return {name: m[1], color: m[2], values: d.runs.map(function (r) { return r.fractions[m[0]]; })};
             })});
    g = section('Throughput and latency');
    bars(g, {title: 'Throughput (req/s)', categories: labels, labels: true,
             groups: [{name: 'req/s', values: d.runs.map(function (r) { return r.summary.throughput_rps; })}]});
    [['TTFT', 'ttft_s'], ['TPOT', 'tpot_s'], ['E2E', 'e2e_s']].forEach(function (k) {
      bars(g, {title: k[0] + ' percentiles (ms)', categories: labels, labels: true,
               groups: ['p50', 'p90', 'p99'].map(function (q) {
                 return {name: k[0] + ' ' + q, values: d.runs.map(function (r) { return r.summary[k[1]][q] * 1000; })};
               })});
    });
    cdfChart(g, 'TTFT CDF', d.runs.map(function (r) { return {name: r.label, points: r.cdfs.ttft}; }));
    cdfChart(g, 'E2E CDF', d.runs.map(function (r) { return {name: r.label, points: r.cdfs.e2e}; }));
    g = section('Requests');
    table(g, ['run', 'completed', 'rejected', 'unfinished', 'preemptions', 'saturation'],
          d.runs.map(function (r) {
            var s = r.summary;
            return [r.label, String(s.requests_completed), String(s.requests_rejected),
                    String(s.requests_unfinished), String(s.preemptions), s.saturation.verdict];
          }));
  }

  function drawPlan(d) {
    var onFront = {};
    d.front.forEach(function (i) { onFront[i] = true; });
    var pts = [];
    d.deployments.forEach(function (p, i) {
      if (p.max_rate_rps > 0) {
        pts.push({x: p.deployment_cost_per_hour, y: p.max_rate_rps, label: p.label, short: p.label,
                  front: !!onFront[i], index: i});
      }
    });
    var g = section('Cost against capacity');
    scatter(g, {title: 'Max sustainable rate vs cost of one deployment', xlabel: 'USD per hour (one deployment)',
                ylabel: 'max sustainable req/s', points: pts,
                front: d.front.map(function (i) { return {x: d.deployments[i].deployment_cost_per_hour, y: d.deployments[i].max_rate_rps}; })});
    table(g, ['Pareto front', 'USD/h', 'max req/s'], d.front.map(function (i) {
      var p = d.deployments[i];
      return [p.label, fmt(p.deployment_cost_per_hour), fmt(p.max_rate_rps)];
    }));
    g = section('Ranking by cost' + (d.target_rate_rps ? ' at ' + fmt(d.target_rate_rps) + ' req/s' : ''));
    var order = d.by_cost.length ? d.by_cost : d.deployments.map(function (p, i) { return i; });
    table(g, ['rank', 'deployment', 'status', 'max req/s', 'replicas needed', 'GPUs', 'USD/h', 'limiting SLO'],
          order.map(function (i, r) {
            var p = d.deployments[i], sized = p.max_rate_rps > 0;
            if (!sized) return [String(r + 1), p.label, p.status, '-', '-', '-', '-', p.limiting_slo === null ? '-' : p.limiting_slo];
            return [String(r + 1), p.label, p.status, fmt(p.max_rate_rps),
                    p.replicas_needed === null ? '-' : String(p.replicas_needed),
                    p.gpus === null ? '-' : String(p.gpus), fmt(p.cost_per_hour),
                    p.limiting_slo === null ? '-' : p.limiting_slo];
          }), order.map(function (i) { return !!onFront[i]; }));
  }

  try {
    var data = JSON.parse(document.getElementById('kvsim-data').textContent);
    var kind = document.body.getAttribute('data-kind');
    ({simulate: drawSimulate, compare: drawCompare, plan: drawPlan})[kind](data);
    if (errorBox.hidden) document.body.setAttribute('data-kvsim-rendered', 'ok');
  } catch (e) {
    fail('error: ' + (e && e.stack ? e.stack : e));
  }
})();
