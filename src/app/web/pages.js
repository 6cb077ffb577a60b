// The dashboard's pages. Each is render(root, ctx): it fills root (a fresh element the router
// has put on screen) and may poll through ctx.every(ms, fn), which stops when the user leaves.
// ctx.params holds the query part of the hash (#/querylog?text=ads), so pages link to each other.

import { api, query } from './api.js';
import { historyChart } from './chart.js';
import { groupForm } from './groups.js';
import {
  act, badge, button, bytes, card, clear, clock, field, form, h, input, notify, notifyError, num, nowSeconds,
  percent, select, table, toggle, when,
} from './ui.js';

const OUTCOMES = ['forwarded', 'cached', 'stale', 'blocked', 'local', 'refused', 'formerr',
  'notimp', 'servfail', 'dropped'];
const QTYPES = ['A', 'AAAA', 'HTTPS', 'SVCB', 'PTR', 'TXT', 'SRV', 'MX', 'CNAME', 'NS', 'SOA', 'ANY'];
const LOCAL_TYPES = ['A', 'AAAA', 'CNAME', 'PTR', 'TXT'];

const enc = encodeURIComponent;
const logLink = (params, text) => h('a', { href: `#/querylog${query(params)}` }, text);

// Shows a failed refresh once, not every few seconds while it keeps failing.
function refresher(fn) {
  let lastError = '';
  return async () => {
    try {
      await fn();
      lastError = '';
    } catch (err) {
      if (err.message !== lastError) notifyError(err);
      lastError = err.message;
    }
  };
}

function blockingText(state) {
  if (!state) return '—';
  if (state.enabled) return 'enabled';
  return state.paused_until ? `paused until ${clock(state.paused_until)}` : 'disabled';
}

// --- overview ------------------------------------------------------------------------------

function stat(label, value, testid, raw, note) {
  return h('div.stat',
    h('span.stat-label', label),
    h('strong.stat-value', { testid, dataset: { value: raw ?? '' } }, value),
    note ? h('span.stat-note', note) : null);
}

function topTable(title, rows, linkParams, empty) {
  const total = rows.reduce((s, r) => s + r.count, 0) || 1;
  return card(title, table([
    { label: 'Name', class: 'name', cell: (r) => logLink(linkParams(r), r.name) },
    { label: 'Queries', class: 'num', cell: (r) => num(r.count) },
    { label: 'Share', class: 'num', cell: (r) => percent((100 * r.count) / total, 0) },
  ], rows, { empty }));
}

function upstreamStatus(s) {
  if (s.healthy === false) return badge('down');  // the daemon's own verdict, when it gives one
  const failed = (s.errors || 0) + (s.timeouts || 0);
  if (!s.queries && !failed) return badge('idle');
  const rate = failed / Math.max(s.queries, 1);
  if (rate > 0.5) return badge('down');
  return rate > 0.05 ? badge('degraded') : badge('ok');
}

export async function overview(root, ctx) {
  const counters = h('div.stats');
  const paused = h('div');
  const chart = card('Queries, last 24 hours', h('p.muted', 'Loading…'));
  const tops = h('div.grid-3');
  const upstreams = card('Upstream servers', h('p.muted', 'Loading…'));
  root.append(paused, counters, chart, tops, upstreams);

  const load = refresher(async () => {
    const [summary, history, top, ups, blocking] = await Promise.all([
      api('GET', '/api/stats/summary'), api('GET', '/api/stats/history'),
      api('GET', '/api/stats/top?count=10'), api('GET', '/api/upstreams'),
      api('GET', '/api/blocking'),
    ]);
    clear(paused, blocking.enabled ? null : h('p.banner', { testid: 'overview-paused' },
      `Blocking is ${blockingText(blocking)}. `, h('a', { href: '#/settings' }, 'Settings')));
    clear(counters,
      stat('Queries', num(summary.queries), 'queries-total', summary.queries, 'last 24 h'),
      stat('Blocked', num(summary.blocked), 'blocked-total', summary.blocked),
      stat('Blocked share', percent(summary.blocked_percent), 'blocked-percent', summary.blocked_percent),
      stat('Cache hits', percent((summary.cache_hit_ratio || 0) * 100), 'cache-hit-ratio',
        summary.cache_hit_ratio),
      stat('Rules in lists', num(summary.rules), 'rules-total', summary.rules),
      stat('Clients', num(summary.clients), 'clients-total', summary.clients));
    clear(chart, h('h2', 'Queries, last 24 hours'), historyChart(history));
    clear(tops,
      topTable('Top domains', top.domains || [], (r) => ({ text: r.name, match: 'exact' }), 'No queries yet.'),
      topTable('Top blocked', top.blocked || [], (r) => ({ text: r.name, match: 'exact', outcome: 'blocked' }),
        'Nothing blocked yet.'),
      topTable('Top clients', top.clients || [], (r) => ({ client: r.name }), 'No clients yet.'));
    clear(upstreams, h('h2', 'Upstream servers'), table([
      { label: 'Server', cell: (s) => s.address },
      { label: 'Status', cell: upstreamStatus },
      { label: 'Queries', class: 'num', cell: (s) => num(s.queries) },
      { label: 'Errors', class: 'num', cell: (s) => num(s.errors) },
      { label: 'Timeouts', class: 'num', cell: (s) => num(s.timeouts) },
      { label: 'Response time', class: 'num',
        cell: (s) => (typeof s.rtt_ms === 'number' ? `${s.rtt_ms.toFixed(1)} ms` : '—') },
    ], ups.servers || [], { empty: 'No upstream servers.', testid: 'upstreams', stack: true }));
  });
  await load();
  ctx.every(5000, load);
}

// --- query log -----------------------------------------------------------------------------

function details(e) {
  if (e.outcome === 'blocked' || e.list || e.rule) {
    const where = e.list ? `${e.list}${e.line ? `:${e.line}` : ''}` : '';
    return [where, e.rule && e.rule !== where ? e.rule : ''].filter(Boolean).join(' · ')
      + (e.ede ? ` (EDE ${e.ede})` : '');
  }
  return e.upstream || (e.ede ? `EDE ${e.ede}` : '');
}

async function addRule(kind, name, button) {
  return act(button, async () => {
    await api('POST', `/api/rules/${kind}`, { rule: name });
    notify(kind === 'deny' ? `${name} is blocked now` : `${name} is allowed now`, 'success');
    return true;
  });
}

function logRow(e) {
  let action = null;
  if (e.name && e.name !== 'hidden') {
    const blocked = e.outcome === 'blocked';
    const kind = blocked ? 'allow' : 'deny';
    action = h(`button.small${blocked ? '.secondary' : '.danger'}`, {
      type: 'button', testid: blocked ? 'log-allow' : 'log-block',
      title: blocked ? `Add an allow rule for ${e.name}` : `Add a block rule for ${e.name}`,
      on: {
        click: async (ev) => {
          const btn = ev.currentTarget;
          if (!(await addRule(kind, e.name, btn))) return;
          // Every row of that name is settled by the one rule.
          const rows = btn.closest('tbody').querySelectorAll('tr[data-testid="log-row"]');
          for (const row of rows) {
            const other = row.querySelector(`[data-testid="${btn.dataset.testid}"]`);
            if (row.dataset.name !== e.name || !other) continue;
            other.textContent = blocked ? 'Allowed' : 'Blocked';
            other.disabled = true;
          }
        },
      },
    }, blocked ? 'Allow' : 'Block');
  }
  const latency = typeof e.latency_ms === 'number' ? `${e.latency_ms.toFixed(1)} ms` : '';
  const rcode = e.rcode && e.rcode !== 'NOERROR' ? h('span.muted', ` ${e.rcode}`) : null;
  return h('tr', { testid: 'log-row', dataset: { name: e.name, id: e.id } },
    h('td.nowrap', { 'data-label': 'Time', title: when(e.time) }, when(e.time)),
    h('td', { 'data-label': 'Client' }, e.client),
    h('td.name', { 'data-label': 'Name' }, e.name),
    h('td', { 'data-label': 'Type' }, e.type),
    h('td.nowrap', { 'data-label': 'Outcome' }, badge(e.outcome), rcode),
    h('td.details', { 'data-label': 'Details' }, details(e), latency ? h('span.muted', ` ${latency}`) : null),
    h('td.action', action));
}

export async function querylog(root, ctx) {
  const p = ctx.params;
  const text = input('log-search-text', 'Name contains…', { type: 'search', value: p.get('text') || '' });
  const match = select([['substring', 'contains'], ['suffix', 'ends with'], ['exact', 'is exactly']],
    { testid: 'log-search-match' });
  match.value = p.get('match') || 'substring';
  const client = input('log-search-client', 'any', { value: p.get('client') || '' });
  const outcome = select([['', 'any'], ...OUTCOMES], { testid: 'log-search-outcome' });
  outcome.value = p.get('outcome') || '';
  const type = select([['', 'any'], ...QTYPES], { testid: 'log-search-type' });
  type.value = p.get('type') || '';
  const live = toggle(false, { testid: 'log-live' }, 'Live');

  const body = h('tbody');
  const more = h('button.secondary', { type: 'button', testid: 'log-more', hidden: true }, 'Load more');
  const status = h('span.muted', { testid: 'log-status' });
  const seen = new Set();
  let filters = {};
  let next = null;

  function show(entries, where) {
    const rows = entries.filter((e) => !seen.has(e.id)).map((e) => {
      seen.add(e.id);
      return logRow(e);
    });
    const empty = body.querySelector('td.empty');
    if (empty && rows.length) empty.parentElement.remove();
    if (where === 'top') body.prepend(...rows);
    else body.append(...rows);
    status.textContent = `${num(seen.size)} shown, newest first`;
  }

  function currentFilters() {
    return {
      text: text.value.trim(), match: text.value.trim() ? match.value : '',
      client: client.value.trim(), outcome: outcome.value, type: type.value,
    };
  }

  async function search() {
    filters = currentFilters();
    // Keep the search in the address so it can be bookmarked; replaceState fires no hashchange.
    history.replaceState(null, '', `#/querylog${query(filters)}`);
    const data = await api('GET', `/api/querylog${query({ ...filters, limit: 100 })}`);
    seen.clear();
    body.replaceChildren();
    if (!data.entries.length) body.append(h('tr', h('td.empty', { colspan: 7 }, 'No queries match.')));
    show(data.entries, 'bottom');
    next = data.next;
    more.hidden = next === null || next === undefined;
  }

  const submit = h('button', { type: 'submit', testid: 'log-search-submit' }, 'Search');
  const searchForm = form([field('Name', text), field('Match', match), field('Client', client),
    field('Outcome', outcome), field('Type', type)], submit, search, live);

  more.addEventListener('click', () => act(more, async () => {
    const data = await api('GET', `/api/querylog${query({ ...filters, before: next, limit: 100 })}`);
    show(data.entries, 'bottom');
    next = data.next;
    more.hidden = next === null || next === undefined;
  }));

  const liveBox = live.querySelector('input');
  const poll = refresher(async () => {
    if (!liveBox.checked) return;
    const data = await api('GET', `/api/querylog${query({ ...filters, limit: 100 })}`);
    show(data.entries, 'top');
  });
  ctx.every(2000, poll);

  root.append(card(null, searchForm), card(null,
    h('div.card-head', h('h2', 'Results'), status),
    h('div.table-wrap', h('table.log', { testid: 'log-table' },
      h('thead', h('tr', ['Time', 'Client', 'Name', 'Type', 'Outcome', 'Details', ''].map((t) => h('th', t)))),
      body)),
    h('div.center', more)));
  await act(submit, search);
}

// --- lists and rules -----------------------------------------------------------------------

function listStatus(l) {
  if (!l.enabled) return badge('off');
  if (l.last_error) return h('span', { title: l.last_error }, badge('error'), ' ', h('span.muted', l.last_error));
  return badge('ok');
}

function listsTable(kind, lists, reload) {
  const setEnabled = (l) => (ev) => {
    const box = ev.currentTarget;
    act(box, async () => {
      try {
        await api('PATCH', `/api/lists/${kind}/${enc(l.name)}`, { enabled: box.checked });
      } catch (err) {
        box.checked = !box.checked;
        throw err;
      }
      await reload();
    });
  };
  return table([
    { label: 'On', cell: (l) => toggle(l.enabled, { testid: 'list-enabled', 'aria-label': `Use ${l.name}`,
      on: { change: setEnabled(l) } }) },
    { label: 'Name', class: 'name', cell: (l) => l.name },
    { label: 'Source', class: 'name', cell: (l) => h('span.muted', l.url || l.path || '') },
    { label: 'Entries', class: 'num', cell: (l) => num(l.entries) },
    { label: 'Invalid', class: 'num', cell: (l) => num(l.invalid) },
    { label: 'Size', class: 'num', cell: (l) => bytes(l.bytes) },
    { label: 'Updated', class: 'nowrap', cell: (l) => when(l.last_success) },
    { label: 'Status', cell: (l) => [listStatus(l), l.failures ? h('span.muted', ` ${l.failures} failures`) : null] },
    { label: '', class: 'action', cell: (l) => button('.small.secondary', 'Remove', 'list-remove', async () => {
      if (!window.confirm(`Remove the list ${l.name}?`)) return;
      await api('DELETE', `/api/lists/${kind}/${enc(l.name)}`);
      notify(`Removed ${l.name}`, 'success');
      await reload();
    }) },
  ], lists, { empty: 'No lists.', testid: `${kind}lists`, stack: true, rowProps: (l) => ({ dataset: { name: l.name } }) });
}

function rulesTable(kind, rules, reload) {
  return table([
    { label: kind === 'deny' ? 'Blocked' : 'Allowed', class: 'name', cell: (r) => r },
    { label: '', class: 'action', cell: (r) => button('.small.secondary', 'Remove', 'rule-remove', async () => {
      await api('DELETE', `/api/rules/${kind}`, { rule: r });
      notify(`Removed ${r}`, 'success');
      await reload();
    }) },
  ], rules, { empty: 'None.', testid: `rules-${kind}` });
}

function explainText(x) {
  if (x.local) return `${x.name} is a local record.`;
  const where = x.list ? ` by ${x.list}${x.line ? ` line ${x.line}` : ''}${x.rule ? ` (${x.rule})` : ''}` : '';
  const verdict = { blocked: 'is blocked', allowed: 'is allowed', none: 'is not on any list' }[x.verdict] || x.verdict;
  return `${x.name} ${verdict}${where} for group ${x.group}${x.paused ? ' (blocking is paused)' : ''}.`;
}

export async function lists(root) {
  const block = h('div');
  const allow = h('div');
  const rules = h('div.grid-2');
  const reload = async () => {
    const [l, r] = await Promise.all([api('GET', '/api/lists'), api('GET', '/api/rules')]);
    clear(block, listsTable('block', l.blocklists || [], reload));
    clear(allow, listsTable('allow', l.allowlists || [], reload));
    clear(rules, card('Blocked names', rulesTable('deny', r.deny || [], reload)),
      card('Allowed names', rulesTable('allow', r.allow || [], reload)));
  };

  const kind = select([['block', 'Blocklist'], ['allow', 'Allowlist']], { testid: 'list-add-kind' });
  const name = input('list-add-name', 'hagezi-pro', { required: true });
  const source = input('list-add-source', 'https://… or /path/to/list.txt', { required: true });
  const enabled = toggle(true, { testid: 'list-add-enabled' }, 'Enabled');
  const addList = form([field('Kind', kind), field('Name', name), field('URL or file', source)],
    h('button', { type: 'submit', testid: 'list-add-submit' }, 'Add list'), async () => {
      const src = source.value.trim();
      const body = { kind: kind.value, name: name.value.trim(), enabled: enabled.querySelector('input').checked };
      body[/^https?:\/\//i.test(src) ? 'url' : 'path'] = src;
      await api('POST', '/api/lists', body);
      notify(`Added ${body.name}`, 'success');
      name.value = '';
      source.value = '';
      await reload();
    }, enabled);

  const refresh = button('.secondary', 'Refresh all', 'lists-refresh', async () => {
    await api('POST', '/api/lists/refresh');
    notify('Downloading lists again; the table updates in a few seconds.', 'success');
    setTimeout(() => reload().catch(notifyError), 4000);
  });

  const ruleKind = select([['deny', 'Block'], ['allow', 'Allow']], { testid: 'rule-add-kind' });
  const rule = input('rule-add-rule', 'example.com, ||example.com^ or /regex/', { required: true });
  const addRule = form([field('Action', ruleKind), field('Rule', rule)],
    h('button', { type: 'submit', testid: 'rule-add-submit' }, 'Add rule'), async () => {
      await api('POST', `/api/rules/${ruleKind.value}`, { rule: rule.value.trim() });
      notify(`Added ${rule.value.trim()}`, 'success');
      rule.value = '';
      await reload();
    });

  const checkName = input('explain-name', 'ads.example.com', { required: true });
  const checkClient = input('explain-client', 'optional');
  const verdict = h('p.verdict', { testid: 'explain-result', 'aria-live': 'polite' });
  const check = form([field('Name', checkName), field('Client', checkClient)],
    h('button.secondary', { type: 'submit', testid: 'explain-submit' }, 'Check'), async () => {
      const params = query({ name: checkName.value.trim(), client: checkClient.value.trim() });
      verdict.textContent = explainText(await api('GET', `/api/explain${params}`));
    });

  root.append(card(null, h('div.card-head', h('h2', 'Blocklists'), refresh), block), card('Allowlists', allow),
    card('Add a list', addList), rules, card('Add a rule', addRule), card('Check a name', check, verdict));
  await reload();
}

// --- local records -------------------------------------------------------------------------

export async function local(root) {
  const list = h('div');
  const reload = async () => {
    const data = await api('GET', '/api/local');
    clear(list, table([
      { label: 'Name', class: 'name', cell: (r) => r.name },
      { label: 'Type', cell: (r) => r.type },
      { label: 'Value', class: 'name', cell: (r) => r.value },
      { label: '', class: 'action', cell: (r) => button('.small.secondary', 'Delete', 'local-remove', async () => {
        await api('DELETE', '/api/local', { name: r.name, type: r.type, value: r.value });
        notify(`Removed ${r.name} ${r.type}`, 'success');
        await reload();
      }) },
    ], data.records || [], { empty: 'No local records.', testid: 'local-records' }));
  };
  const name = input('local-add-name', 'nas.lan', { required: true });
  const type = select(LOCAL_TYPES, { testid: 'local-add-type' });
  const value = input('local-add-value', '192.168.1.10', { required: true });
  const add = form([field('Name', name), field('Type', type), field('Value', value)],
    h('button', { type: 'submit', testid: 'local-add-submit' }, 'Add record'), async () => {
      const record = { name: name.value.trim(), type: type.value, value: value.value.trim() };
      await api('POST', '/api/local', record);
      notify(`Added ${record.name} ${record.type}`, 'success');
      name.value = '';
      value.value = '';
      await reload();
    });
  root.append(card('Records', h('p.muted', 'Names dnsmoat answers itself; PTR answers for A and AAAA '
    + 'records are made automatically.'), list), card('Add a record', add));
  await reload();
}

// --- groups and clients --------------------------------------------------------------------

// A group's lists: unset means every list.
const names = (v) => (Array.isArray(v) ? (v.length ? v.join(', ') : 'none') : 'all');

export async function groups(root) {
  const list = h('div');
  const seen = h('div');
  let current = [];
  const reload = async () => {
    const [g, c] = await Promise.all([api('GET', '/api/groups'), api('GET', '/api/clients')]);
    current = g.groups || [];
    clear(list, table([
      { label: 'Name', cell: (x) => x.name },
      { label: 'Clients', class: 'name', cell: (x) => (x.clients || []).join(', ') || '—' },
      { label: 'MAC addresses', class: 'name', cell: (x) => (x.macs || []).join(', ') || '—' },
      { label: 'Blocklists', class: 'name', cell: (x) => names(x.blocklists) },
      { label: 'Allowlists', class: 'name', cell: (x) => names(x.allowlists) },
      { label: 'Blocking mode', cell: (x) => x.blocking_mode || 'default' },
      { label: 'Paused until', cell: (x) => (x.paused_until ? clock(x.paused_until) : '—') },
      { label: '', class: 'action', cell: (x) => [
        h('button.small.secondary', { type: 'button', testid: 'group-edit', on: { click: () => editor.edit(x) } },
          'Edit'), ' ',
        // Deleting "default" puts back the built-in one: every list, the global mode.
        button('.small.secondary', x.name === 'default' ? 'Reset' : 'Delete', 'group-delete', async () => {
          const reset = x.name === 'default';
          if (!window.confirm(reset ? 'Reset the group default to the built-in default?'
            : `Delete the group ${x.name}? Its clients go to the group default.`)) return;
          await api('DELETE', `/api/groups/${enc(x.name)}`);
          notify(reset ? 'Reset the group default' : `Deleted the group ${x.name}`, 'success');
          editor.reset();
          await reload();
        }),
      ] },
    ], current, { empty: 'No groups: every client is in "default".', testid: 'groups', stack: true,
      rowProps: (x) => ({ dataset: { name: x.name } }) }));
    clear(seen, table([
      { label: 'Client', cell: (x) => logLink({ client: x.address }, x.address) },
      { label: 'Group', cell: (x) => x.group },
      { label: 'Queries', class: 'num', cell: (x) => num(x.queries) },
    ], c.clients || [], { empty: 'No clients in the last 24 hours.', testid: 'clients' }));
  };
  // The list names for the form's checkboxes; without them the form still offers "all".
  const lists = await api('GET', '/api/lists').catch((err) => {
    if (err.status !== 401) notifyError(err);
    return null;
  });
  const editor = groupForm(lists, (name) => current.some((x) => x.name === name), reload);
  root.append(card('Groups', list), card(null, editor.element), card('Clients, last 24 hours', seen));
  await reload();
}

// --- settings ------------------------------------------------------------------------------

export async function settings(root, ctx) {
  const state = h('strong', { testid: 'blocking-state' }, '—');
  const groupPauses = h('ul.plain', { testid: 'blocking-groups' });
  const group = select([['', 'everyone']], { testid: 'pause-group' });
  const minutes = h('input', { type: 'number', min: 1, max: 10080, value: 10, testid: 'pause-custom-minutes',
    'aria-label': 'Minutes' });

  function showState(s) {
    state.textContent = blockingText(s);
    state.className = s.enabled ? 'state-on' : 'state-off';
    const paused = Object.entries(s.groups || {}).filter(([, t]) => t && t > nowSeconds());
    clear(groupPauses, paused.map(([g, t]) => h('li', `${g}: paused until ${clock(t)}`)));
  }
  const change = async (body) => {
    if (group.value) body.group = group.value;
    showState(await api('POST', '/api/blocking', body));
  };
  const pause = (seconds, label) => button('.secondary', label, `pause-${seconds}`,
    () => change({ enabled: false, seconds }));
  const custom = button('.secondary', 'Pause', 'pause-custom', async () => {
    const m = Number(minutes.value);
    if (!Number.isFinite(m) || m <= 0) throw new Error('Give the pause in minutes, more than 0.');
    await change({ enabled: false, seconds: Math.round(m * 60) });
  });

  const file = h('input', { type: 'file', accept: '.tar,application/x-tar', testid: 'config-restore-file' });
  const restore = button('.secondary', 'Restore', 'config-restore', async () => {
    if (!file.files.length) throw new Error('Choose a backup file first.');
    await api('POST', '/api/config/restore', file.files[0]);
    notify('Configuration restored and applied.', 'success');
    file.value = '';
  });

  root.append(
    card('Blocking',
      h('p', 'Blocking is ', state, '.'), groupPauses,
      h('div.row', field('For', group)),
      h('div.row', pause(30, 'Pause 30 s'), pause(300, 'Pause 5 min'), pause(3600, 'Pause 1 h'),
        h('span.inline', minutes, h('span.muted', 'min'), custom),
        button('', 'Resume blocking', 'resume', () => change({ enabled: true })))),
    card('Cache', h('p.muted', 'Forget every cached answer; the next queries go to the upstream servers.'),
      button('.secondary', 'Flush cache', 'cache-flush', async () => {
        const r = await api('POST', '/api/cache/flush');
        notify(`Cache flushed: ${num(r.flushed)} answers removed`, 'success');
      })),
    card('Backup and restore',
      h('p.muted', 'The backup holds the configuration file, the local hosts file and the lists\' status.'),
      h('div.row',
        h('a.button.secondary', { href: '/api/config/backup', download: 'dnsmoat-backup.tar', testid: 'config-backup' },
          'Download backup'),
        file, restore)),
    card('API access',
      h('p', 'Scripts use a token instead of the password: make one on the server with ',
        h('code', 'dnsmoat api-token'), ' and send it as ', h('code', 'Authorization: Bearer TOKEN'), '.'),
      h('pre', 'curl -H "Authorization: Bearer $TOKEN" http://dnsmoat:8053/api/stats/summary')));

  const load = refresher(async () => showState(await api('GET', '/api/blocking')));
  const [, g] = await Promise.all([load(), api('GET', '/api/groups').catch(() => ({ groups: [] }))]);
  for (const x of g.groups || []) group.append(h('option', { value: x.name }, x.name));
  ctx.every(5000, load);
}
