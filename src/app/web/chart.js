// The 24-hour chart of the overview: one stacked bar per 10-minute bucket (blocked at the bottom,
// then cached, then the rest), drawn as inline SVG. Colours come from CSS classes; the SVG
// stretches to the card's width (preserveAspectRatio none), so its labels are HTML around it.

import { clock, h, num } from './ui.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 1440;  // viewBox units: 10 per bucket
const HEIGHT = 200;

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...children);
  return el;
}

// A rounded maximum for the axis: 1, 2 or 5 times a power of ten.
function niceMax(n) {
  if (n <= 5) return 5;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (n <= m * p) return m * p;
  return 10 * p;
}

export function historyChart(history) {
  const buckets = (history && history.buckets) || [];
  const interval = (history && history.interval_seconds) || 600;
  const total = buckets.reduce((s, b) => s + (b.queries || 0), 0);
  const max = niceMax(Math.max(0, ...buckets.map((b) => b.queries || 0)));
  const step = WIDTH / Math.max(buckets.length, 1);
  const y = (v) => (v / max) * HEIGHT;

  const chart = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: 'none', class: 'chart',
    role: 'img', 'aria-label': `Queries over 24 hours: ${total} in all`,
  });
  for (const f of [0.25, 0.5, 0.75]) {
    chart.append(svg('line', { x1: 0, x2: WIDTH, y1: HEIGHT * f, y2: HEIGHT * f, class: 'grid' }));
  }
  buckets.forEach((b, i) => {
    const x = i * step + step * 0.1;
    const w = step * 0.8;
    const blocked = b.blocked || 0;
    const cached = b.cached || 0;
    const rest = Math.max(0, (b.queries || 0) - blocked - cached);
    const group = svg('g', {});
    let top = HEIGHT;
    for (const [value, cls] of [[blocked, 'bar-blocked'], [cached, 'bar-cached'], [rest, 'bar-other']]) {
      if (!value) continue;
      const height = y(value);
      top -= height;
      group.append(svg('rect', { x, y: top, width: w, height, class: cls }));
    }
    // A full-height target so the tooltip shows anywhere over the bucket.
    const title = svg('title', {});
    title.textContent = `${clock(b.time)}–${clock(b.time + interval)}: ${num(b.queries || 0)} queries, `
      + `${num(blocked)} blocked, ${num(cached)} cached`;
    group.append(svg('rect', { x: i * step, y: 0, width: step, height: HEIGHT, class: 'hit' }, title));
    chart.append(group);
  });

  const first = buckets.length ? buckets[0].time : Date.now() / 1000 - 86400;
  const ticks = [0, 6, 12, 18, 24].map((hours) => h('span', clock(first + hours * 3600).slice(0, 5)));
  return h('figure.chart-box', { testid: 'history-chart' },
    h('div.chart-legend',
      h('span.key.key-other', 'Forwarded and other'), h('span.key.key-cached', 'Cached'),
      h('span.key.key-blocked', 'Blocked'), h('span.chart-max', `max ${num(max)} / 10 min`)),
    total ? chart : h('p.empty', 'No queries in the last 24 hours.'),
    h('div.chart-axis', ticks));
}
