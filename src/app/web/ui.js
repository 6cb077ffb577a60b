// DOM helpers, formatting and notices shared by every page.
//
// Everything is built with createElement and textContent, never innerHTML: names in the query
// log come from any device on the network and must never become markup. It also keeps the
// page within its Content-Security-Policy (no inline styles or handlers).

// h('tag.class1.class2', {attrs, on: {event: fn}, testid, dataset}, ...children)
export function h(spec, props, ...children) {
  if (props === null || typeof props !== 'object' || props instanceof Node || Array.isArray(props)) {
    if (props !== undefined && props !== null) children.unshift(props);
    props = {};
  }
  const [tag, ...classes] = spec.split('.');
  const el = document.createElement(tag || 'div');
  if (classes.length) el.classList.add(...classes);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'on') {
      for (const [event, fn] of Object.entries(value)) el.addEventListener(event, fn);
    } else if (key === 'testid') {
      el.dataset.testid = value;
    } else if (key === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (key === 'value' || key === 'checked' || key === 'disabled') {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// --- formatting ----------------------------------------------------------------------------

const pad = (n) => String(n).padStart(2, '0');

// Local wall-clock time of Unix seconds: HH:MM:SS (24 h, as the tests and logs expect).
export function clock(seconds) {
  const d = new Date(seconds * 1000);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// Local date and time, the date left out for today.
export function when(seconds) {
  if (seconds === null || seconds === undefined || seconds === 0) return '—';
  const d = new Date(seconds * 1000);
  const today = new Date();
  const sameDay = d.toDateString() === today.toDateString();
  const date = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return sameDay ? clock(seconds) : `${date} ${clock(seconds)}`;
}

const numberFormat = new Intl.NumberFormat();
export const num = (n) => (typeof n === 'number' ? numberFormat.format(n) : '—');

export function percent(value, digits = 1) {
  return typeof value === 'number' ? `${value.toFixed(digits)} %` : '—';
}

export function bytes(n) {
  if (typeof n !== 'number') return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

export const nowSeconds = () => Date.now() / 1000;

// --- notices -------------------------------------------------------------------------------

// A notice at the bottom of the screen; errors stay until closed, the rest go after 4 s.
export function notify(message, kind = 'info') {
  const box = document.getElementById('notices');
  const note = h(`div.notice.notice-${kind}`,
    { role: kind === 'error' ? 'alert' : 'status', testid: kind === 'error' ? 'error' : 'notice' },
    h('span', message),
    // The × comes from CSS, so the notice's text is the message alone.
    h('button.link.close', { type: 'button', 'aria-label': 'Close', on: { click: () => note.remove() } }));
  box.append(note);
  if (kind !== 'error') setTimeout(() => note.remove(), 4000);
  while (box.children.length > 4) box.firstElementChild.remove();
}

export const notifyError = (err) => notify(err && err.message ? err.message : String(err), 'error');

// Runs an API action from a button: disabled while it runs, errors shown.
export async function act(button, fn) {
  if (button) button.disabled = true;
  try {
    return await fn();
  } catch (err) {
    notifyError(err);
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

// --- building blocks -----------------------------------------------------------------------

export function card(title, ...body) {
  return h('section.card', title ? h('h2', title) : null, ...body);
}

// A table: columns [{label, cell(row) -> Node|string, class}], rows, and what to say when empty;
// stack: on a phone, show each row as a block of "label value" lines instead of scrolling.
export function table(columns, rows, { empty = 'Nothing here yet.', testid, rowProps, stack } = {}) {
  const head = h('tr', columns.map((c) => h(`th${c.class ? `.${c.class}` : ''}`, c.label)));
  const body = h('tbody');
  if (!rows.length) {
    body.append(h('tr', h('td.empty', { colspan: columns.length }, empty)));
  }
  for (const row of rows) {
    body.append(h('tr', rowProps ? rowProps(row) : {},
      columns.map((c) => h(`td${c.class ? `.${c.class}` : ''}`, { 'data-label': c.label }, c.cell(row)))));
  }
  return h('div.table-wrap', h(stack ? 'table.stack' : 'table', { testid }, h('thead', head), body));
}

export function badge(text, kind = text) {
  return h(`span.badge.badge-${kind}`, text);
}

// A button whose click runs the API action fn(button), disabled meanwhile, errors shown.
export function button(spec, label, testid, fn) {
  return h(`button${spec}`, { type: 'button', testid, on: { click: (ev) => act(ev.currentTarget, () => fn(ev.currentTarget)) } },
    label);
}

// A one-line form: fields, then its submit button (and extras beside it); submitting runs fn.
export function form(fields, submit, fn, ...extras) {
  return h('form.toolbar', { on: { submit: (ev) => { ev.preventDefault(); act(submit, fn); } } },
    fields, h('div.field-actions', submit, extras));
}

export const input = (testid, placeholder, props = {}) =>
  h('input', { type: 'text', testid, placeholder, autocomplete: 'off', ...props });

export function field(label, control) {
  return h('label.field', h('span', label), control);
}

export function select(options, props = {}) {
  return h('select', props, options.map((o) => {
    const [value, label] = Array.isArray(o) ? o : [o, o];
    return h('option', { value }, label);
  }));
}

// A labelled on/off switch around a checkbox.
export function toggle(checked, props, label) {
  return h('label.switch', h('input', { type: 'checkbox', checked, ...props }), h('span', label || ''));
}
