// dnsmoat dashboard: hash router, sign-in flow and page shell. No framework, no build step;
// the files in this directory are embedded into the daemon and served as they are.
//
// Stable test ids (data-testid) for browser tests (tests/browser/dashboard.mjs):
//   shell     nav-overview nav-querylog nav-lists nav-local nav-groups nav-settings, logout,
//             notice (a success/info message), error (an API error; its text is the API's
//             "error" field)
//   login     login-password login-submit login-error
//   overview  queries-total blocked-total blocked-percent cache-hit-ratio rules-total
//             clients-total (each with data-value = the raw number), history-chart,
//             upstreams, overview-paused
//   querylog  log-search-text log-search-match log-search-client log-search-outcome
//             log-search-type log-search-submit log-live, log-table, log-status, log-more,
//             log-row (data-name = the domain, data-id), inside a row: log-block / log-allow
//   lists     blocklists allowlists (tables; rows carry data-name), list-enabled list-remove
//             lists-refresh, list-add-kind list-add-name list-add-source list-add-enabled
//             list-add-submit, rules-deny rules-allow rule-remove, rule-add-kind rule-add-rule
//             rule-add-submit, explain-name explain-client explain-submit explain-result
//   local     local-records local-remove local-add-name local-add-type local-add-value
//             local-add-submit
//   groups    groups (rows carry data-name), clients, inside a group row: group-edit group-delete
//             (labelled "Reset" on "default"); group-form with group-name group-clients
//             group-macs group-mode group-filter-aaaa, group-blocklists-all group-allowlists-all,
//             group-blocklist group-allowlist (checkboxes, data-name = the list), group-save
//             group-cancel
//   settings  blocking-state ("enabled", "paused until HH:MM:SS" or "disabled"),
//             blocking-groups, pause-group, pause-30 pause-300 pause-3600,
//             pause-custom-minutes pause-custom, resume, cache-flush, config-backup,
//             config-restore-file config-restore

import { api, setCsrf, setUnauthorizedHandler } from './api.js';
import * as pages from './pages.js';
import { clear, h, notifyError } from './ui.js';

const PAGES = {
  overview: { title: 'Overview', render: pages.overview },
  querylog: { title: 'Query log', render: pages.querylog },
  lists: { title: 'Lists', render: pages.lists },
  local: { title: 'Local records', render: pages.local },
  groups: { title: 'Groups and clients', render: pages.groups },
  settings: { title: 'Settings', render: pages.settings },
};

const view = document.getElementById('view');
const auth = { passwordSet: false, signedIn: false };
// Where to go after signing in: the page the user asked for before the login got in the way.
let afterLogin = '#/overview';

// The current page's timers: stopped when another page is shown, paused while the tab is hidden.
let scope = null;
function newScope() {
  if (scope) scope.alive = false;
  const s = {
    alive: true,
    every(ms, fn) {
      const tick = async () => {
        if (!s.alive) return;
        if (!document.hidden) await fn();
        if (s.alive) setTimeout(tick, ms);
      };
      setTimeout(tick, ms);
    },
  };
  scope = s;
  return s;
}

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [name, search = ''] = raw.split('?');
  return { name: name || 'overview', params: new URLSearchParams(search) };
}

function needsLogin() {
  return auth.passwordSet && !auth.signedIn;
}

function setShell(signedOut) {
  document.body.classList.toggle('signed-out', signedOut);
  document.getElementById('logout').hidden = !auth.passwordSet;
}

async function route() {
  const { name, params } = parseHash();
  if (needsLogin()) {
    if (name !== 'login') afterLogin = location.hash || '#/overview';
    showLogin();
    return;
  }
  const page = PAGES[name];
  if (!page) {
    location.replace('#/overview');
    return;
  }
  setShell(false);
  for (const link of document.querySelectorAll('nav a')) {
    const active = link.dataset.page === name;
    link.classList.toggle('active', active);
    if (active) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.title = `${page.title} · dnsmoat`;
  const ctx = newScope();
  ctx.params = params;
  const root = h('div.page', { dataset: { page: name } }, h('h1', page.title));
  clear(view, root);
  try {
    await page.render(root, ctx);
  } catch (err) {
    if (err.status !== 401) {
      root.append(h('p.banner.banner-error', `Could not load this page: ${err.message}`));
      notifyError(err);
    }
  }
}

function showLogin(message) {
  newScope();
  setShell(true);
  document.title = 'Sign in · dnsmoat';
  const password = h('input', {
    type: 'password', id: 'password', name: 'password', required: true, autocomplete: 'current-password',
    autofocus: true, testid: 'login-password',
  });
  const error = h('p.form-error', { testid: 'login-error', role: 'alert', hidden: !message }, message || '');
  const submit = h('button', { type: 'submit', testid: 'login-submit' }, 'Sign in');
  const form = h('form.login', {
    on: {
      submit: async (ev) => {
        ev.preventDefault();
        submit.disabled = true;
        error.hidden = true;
        try {
          const res = await api('POST', '/api/auth/login', { password: password.value });
          setCsrf(res && res.csrf);
          auth.signedIn = true;
          const target = afterLogin.startsWith('#/login') ? '#/overview' : afterLogin;
          if (location.hash === target) route();
          else location.hash = target;
        } catch (err) {
          // The API's own words when it sent some; a bare status says less than this.
          error.textContent = /^401\b/.test(err.message) ? 'Wrong password.' : err.message;
          error.hidden = false;
          password.select();
        } finally {
          submit.disabled = false;
        }
      },
    },
  },
  h('div.login-brand', h('img', { src: '/favicon.svg', alt: '', width: 40, height: 40 }), h('span', 'dnsmoat')),
  h('label.field', { for: 'password' }, h('span', 'Password')), password, error, submit);
  clear(view, h('div.login-page', { dataset: { page: 'login' } }, form));
  password.focus();
}

async function logout(ev) {
  const button = ev.currentTarget;
  button.disabled = true;
  try {
    await api('POST', '/api/auth/logout');
  } catch (err) {
    if (err.status !== 401) notifyError(err);
  } finally {
    button.disabled = false;
  }
  setCsrf(null);
  auth.signedIn = false;
  afterLogin = '#/overview';
  location.hash = '#/login';
  showLogin();
}

// Any 401 means the session ended (expired, logged out elsewhere, daemon restarted).
setUnauthorizedHandler(() => {
  if (!auth.passwordSet || auth.signedIn) {
    auth.passwordSet = true;
    auth.signedIn = false;
    afterLogin = location.hash || '#/overview';
    showLogin('Your session ended; sign in again.');
  }
});

async function boot() {
  document.getElementById('logout').addEventListener('click', logout);
  window.addEventListener('hashchange', route);
  try {
    const state = await api('GET', '/api/auth');
    auth.passwordSet = Boolean(state.password_set);
    auth.signedIn = Boolean(state.authenticated) || !state.password_set;
    setCsrf(state.csrf);
  } catch (err) {
    clear(view, h('p.banner.banner-error', `dnsmoat is not answering: ${err.message}. Reload to try again.`));
    return;
  }
  route();
}

boot();
