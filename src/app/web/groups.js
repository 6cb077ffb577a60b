// The form that adds or edits a group (PUT /api/groups/{name}), used by the Groups page.
// It sends the fields the dashboard edits; the group's upstreams and schedule stay as they are.

import { api } from './api.js';
import { act, field, h, input, notify, select } from './ui.js';

const MODES = [['', 'default'], 'null', 'nxdomain', 'refused', 'custom'];

// "192.168.1.0/24, 10.0.0.5\n10.0.0.6" -> ["192.168.1.0/24", "10.0.0.5", "10.0.0.6"]
const split = (text) => text.split(/[\s,]+/).filter(Boolean);

const textarea = (testid, placeholder) =>
  h('textarea', { testid, placeholder, rows: 3, autocomplete: 'off', spellcheck: 'false' });

// Checkboxes for one kind of list: "all" (sent as null) or the ones ticked (sent as names).
function listChoice(kind, names) {
  const all = h('input', { type: 'checkbox', checked: true, testid: `group-${kind}s-all` });
  const boxes = h('div.checks');
  const add = (name, extra) => boxes.append(h(`label.check${extra ? '.extra' : ''}`,
    h('input', { type: 'checkbox', value: name, disabled: true, testid: `group-${kind}`, dataset: { name } }),
    h('span', name)));
  for (const name of names) add(name, false);
  const each = () => [...boxes.querySelectorAll('input')];
  const sync = () => each().forEach((b) => { b.disabled = all.checked; });
  all.addEventListener('change', sync);
  return {
    element: h('fieldset.choice', h('legend', `${kind[0].toUpperCase()}${kind.slice(1)}s`),
      h('label.check', all, h('span', `All ${kind}s`)), boxes),
    get: () => (all.checked ? null : each().filter((b) => b.checked).map((b) => b.value)),
    set(value) {
      all.checked = !Array.isArray(value);
      // A name the list listing lacks still shows, so saving does not drop it unseen.
      boxes.querySelectorAll('.extra').forEach((l) => l.remove());
      for (const name of value || []) if (!each().some((b) => b.value === name)) add(name, true);
      for (const b of each()) b.checked = Array.isArray(value) && value.includes(b.value);
      sync();
    },
  };
}

// lists: GET /api/lists (or null); known(name): whether a group exists; saved(): after a change.
// Returns {element, edit(group), reset()}.
export function groupForm(lists, known, saved) {
  const name = input('group-name', 'kids', { required: true });
  const clients = textarea('group-clients', '192.168.1.0/24, 10.0.0.5');
  const macs = textarea('group-macs', 'aa:bb:cc:dd:ee:ff');
  const block = listChoice('blocklist', ((lists && lists.blocklists) || []).map((l) => l.name));
  const allow = listChoice('allowlist', ((lists && lists.allowlists) || []).map((l) => l.name));
  const mode = select(MODES, { testid: 'group-mode' });
  const aaaa = h('input', { type: 'checkbox', testid: 'group-filter-aaaa' });
  const title = h('h2', 'Add a group');
  const save = h('button', { type: 'submit', testid: 'group-save' }, 'Add group');
  const cancel = h('button.secondary', { type: 'button', testid: 'group-cancel', hidden: true }, 'Cancel');

  // "default" holds every client no other group claims, so it has no client list of its own.
  const syncDefault = () => {
    const isDefault = name.value.trim() === 'default';
    clients.disabled = isDefault;
    clients.placeholder = isDefault ? 'everyone no other group claims' : '192.168.1.0/24, 10.0.0.5';
  };
  name.addEventListener('input', syncDefault);

  function fill(g, editing) {
    name.value = g.name || '';
    name.readOnly = editing;
    clients.value = (g.clients || []).join('\n');
    macs.value = (g.macs || []).join('\n');
    block.set(g.blocklists);
    allow.set(g.allowlists);
    mode.value = g.blocking_mode || '';
    aaaa.checked = Boolean(g.filter_aaaa);
    title.textContent = editing ? `Edit the group ${g.name}` : 'Add a group';
    save.textContent = editing ? 'Save group' : 'Add group';
    cancel.hidden = !editing;
    syncDefault();
  }
  const reset = () => fill({ blocklists: null, allowlists: null }, false);

  const element = h('form.stack-form', {
    testid: 'group-form',
    on: {
      submit: (ev) => {
        ev.preventDefault();
        act(save, async () => {
          const group = name.value.trim();
          const existed = known(group);
          await api('PUT', `/api/groups/${encodeURIComponent(group)}`, {
            clients: clients.disabled ? [] : split(clients.value),
            macs: split(macs.value),
            blocklists: block.get(),
            allowlists: allow.get(),
            blocking_mode: mode.value || null,
            filter_aaaa: aaaa.checked,
          });
          notify(existed ? `Saved the group ${group}` : `Added the group ${group}`, 'success');
          reset();
          await saved();
        });
      },
    },
  },
  title,
  h('div.toolbar', field('Name', name), field('Blocking mode', mode),
    h('label.check', aaaa, h('span', 'Filter AAAA (empty answers to IPv6 address queries)'))),
  h('div.grid-2', field('Clients (addresses or CIDR ranges)', clients), field('MAC addresses', macs)),
  h('div.grid-2', block.element, allow.element),
  h('div.field-actions', save, cancel));
  cancel.addEventListener('click', reset);
  reset();

  return {
    element,
    reset,
    edit(g) {
      fill(g, true);
      element.scrollIntoView({ block: 'nearest' });
      (clients.disabled ? macs : clients).focus();
    },
  };
}
