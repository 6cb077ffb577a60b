// The web dashboard end to end in Debian's Chromium (driven by playwright-core, which downloads
// no browser): sign in (a wrong password first), watch the query counter rise after real DNS
// queries, find one in the query log, block it with one click and see DNS answer 0.0.0.0,
// pause blocking and see it forwarded again, resume, visit every page, sign out. Fails on any
// uncaught page error or Content-Security-Policy violation.
//
// Environment:
//   MOAT_URL          the dashboard, e.g. http://127.0.0.1:8053 (required)
//   MOAT_PASSWORD     the API password (required)
//   MOAT_DNS_PORT     the daemon's DNS port on 127.0.0.1 (required)
//   MOAT_NAMES        comma-separated names the upstream answers (default: DEFAULT_NAMES); the
//                     first is the one blocked
//   MOAT_SCREENSHOTS  a directory for one PNG per page (optional)
//   MOAT_VIEWPORT     WIDTHxHEIGHT (default 1280x800), e.g. 390x844 to look at the phone layout
//
// Exit status 0 when every step passed, 1 with the failing step and why otherwise. Every wait
// is bounded and the whole run is cut at 85 s. Only 127.0.0.1 is contacted.

import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const DEFAULT_NAMES = ['www.dashboard.test', 'cdn.dashboard.test', 'api.dashboard.test'];
const CHROMIUM = '/usr/bin/chromium';
// Without the background-networking flags Chromium keeps trying to reach Google's hosts.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const RUN_LIMIT_MS = 85_000;

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`dashboard.mjs: set ${name} (see the comment at the top of this file)`);
    process.exit(2);
  }
  return value;
}

const BASE = required('MOAT_URL').replace(/\/$/, '');
const PASSWORD = required('MOAT_PASSWORD');
const DNS_PORT = required('MOAT_DNS_PORT');
const NAMES = (process.env.MOAT_NAMES || DEFAULT_NAMES.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
const TARGET = NAMES[0];
const SHOTS = process.env.MOAT_SCREENSHOTS || '';
const [WIDTH, HEIGHT] = (process.env.MOAT_VIEWPORT || '1280x800').split('x').map(Number);

if (!/^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(BASE)) {
  console.error(`dashboard.mjs: MOAT_URL must be a loopback http:// address, not ${BASE}`);
  process.exit(2);
}

const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls fn until it returns a truthy value; throws `what` (with the last value) after ms.
async function until(fn, ms, what) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`${what} (within ${ms / 1000} s; last: ${JSON.stringify(last)})`);
    await sleep(250);
  }
}

// One A query through kdig: the answer lines (addresses), [] for none or on failure.
function kdig(name) {
  // kdig spells dig's +time=2 +tries=1 as +timeout=2 +retry=0.
  const args = ['@127.0.0.1', '-p', String(DNS_PORT), name, 'A', '+short', '+timeout=2', '+retry=0'];
  return new Promise((resolve) => {
    execFile('kdig', args, { timeout: 6000 }, (err, stdout) => {
      resolve(err ? [] : stdout.split('\n').map((l) => l.trim()).filter(Boolean));
    });
  });
}

const isBlocked = (answer) => answer.length === 1 && answer[0] === '0.0.0.0';
const isForwarded = (answer) => answer.length > 0 && !answer.includes('0.0.0.0');

let context;
let page;
let userDataDir;
const problems = [];  // page errors and CSP violations, reported at the end

async function shot(name) {
  if (!SHOTS) return;
  await page.waitForTimeout(300);  // let the last fetch land so the picture is complete
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

const byId = (id) => page.getByTestId(id);

async function visibleErrors() {
  return page.getByTestId('error').allTextContents().catch(() => []);
}

// Waits for a success notice after an action, failing with the API's error if one shows up.
async function expectNotice(what) {
  const result = await until(async () => {
    const errors = await visibleErrors();
    if (errors.length) return { error: errors.join(' | ') };
    const notes = await byId('notice').allTextContents();
    return notes.length ? { notes } : null;
  }, 10_000, `no confirmation of ${what}`);
  if (result.error) throw new Error(`${what} failed: ${result.error}`);
}

async function blockingState() {
  return (await byId('blocking-state').textContent()).trim();
}

async function counter(id) {
  const raw = await byId(id).getAttribute('data-value');
  return raw === null || raw === '' ? null : Number(raw);
}

const steps = [
  ['sign in (after a wrong password)', async () => {
    await page.goto(`${BASE}/`);
    await byId('login-password').waitFor({ timeout: 10_000 });
    await shot('login');
    await byId('login-password').fill(`not-${PASSWORD}`);
    await byId('login-submit').click();
    await byId('login-error').waitFor({ timeout: 10_000 });
    const message = (await byId('login-error').textContent()).trim();
    if (!message) throw new Error('the login error is empty');
    console.log(`  wrong password shows: "${message}"`);
    await byId('login-password').fill(PASSWORD);
    await byId('login-submit').click();
    await byId('nav-overview').waitFor({ timeout: 10_000 });
    await until(() => counter('queries-total').then((v) => v !== null), 10_000, 'the overview shows no query count');
  }],

  ['the query counter rises after DNS queries', async () => {
    const before = await counter('queries-total');
    for (const name of NAMES) {
      const answer = await kdig(name);
      if (!isForwarded(answer)) throw new Error(`kdig ${name}: expected a forwarded answer, got ${JSON.stringify(answer)}`);
    }
    // The overview refreshes itself every 5 s.
    const after = await until(async () => {
      const v = await counter('queries-total');
      return v !== null && v >= before + NAMES.length ? v : null;
    }, 30_000, `queries-total did not rise from ${before} by ${NAMES.length}`);
    console.log(`  queries-total ${before} -> ${after}`);
    await shot('overview');
  }],

  ['the query log finds the name', async () => {
    await byId('nav-querylog').click();
    await byId('log-search-text').fill(TARGET);
    const row = page.locator(`[data-testid="log-row"][data-name="${TARGET}"]`).first();
    // The log is written in batches ([querylog] flush_interval): search again until it is there.
    await until(async () => {
      await byId('log-search-submit').click();
      return row.waitFor({ timeout: 2000 }).then(() => true, () => false);
    }, 20_000, `no query log row for ${TARGET}`);
    await shot('querylog');
  }],

  ['Block on the row blocks the name', async () => {
    const row = page.locator(`[data-testid="log-row"][data-name="${TARGET}"]`).first();
    await row.getByTestId('log-block').click();
    await expectNotice(`blocking ${TARGET}`);
    await until(async () => isBlocked(await kdig(TARGET)), 10_000, `${TARGET} is not answered 0.0.0.0 after Block`);
  }],

  ['pausing blocking forwards the name, resume blocks it again', async () => {
    await byId('nav-settings').click();
    await until(async () => (await blockingState()) === 'enabled', 10_000, 'blocking-state is not "enabled"');
    await byId('pause-30').click();
    const state = await until(async () => {
      const s = await blockingState();
      return /^paused until \d\d:\d\d:\d\d$/.test(s) ? s : null;
    }, 10_000, 'blocking-state does not say "paused until HH:MM:SS"');
    console.log(`  blocking-state: ${state}`);
    await until(async () => isForwarded(await kdig(TARGET)), 10_000, `${TARGET} still blocked while paused`);
    await shot('settings');
    await byId('resume').click();
    await until(async () => (await blockingState()) === 'enabled', 10_000, 'blocking-state is not "enabled" after resume');
    await until(async () => isBlocked(await kdig(TARGET)), 10_000, `${TARGET} not blocked again after resume`);
  }],

  ['the other pages load', async () => {
    for (const [name, table] of [['lists', 'blocklists'], ['local', 'local-records'], ['groups', 'groups']]) {
      await byId(`nav-${name}`).click();
      await byId(table).waitFor({ timeout: 10_000 });
      const errors = await visibleErrors();
      if (errors.length) throw new Error(`the ${name} page shows: ${errors.join(' | ')}`);
      await shot(name);
    }
    // The rule added by Block is listed.
    await byId('nav-lists').click();
    await byId('rules-deny').getByText(TARGET, { exact: true }).waitFor({ timeout: 10_000 });
  }],

  ['sign out', async () => {
    await byId('logout').click();
    await byId('login-password').waitFor({ timeout: 10_000 });
    await page.reload();
    await byId('login-password').waitFor({ timeout: 10_000 });
  }],
];

async function main() {
  const watchdog = setTimeout(() => {
    console.error(`FAIL: the run took longer than ${RUN_LIMIT_MS / 1000} s`);
    process.exit(1);
  }, RUN_LIMIT_MS);
  if (SHOTS) await mkdir(SHOTS, { recursive: true });
  userDataDir = await mkdtemp(path.join(os.tmpdir(), 'moat-chromium-'));
  let failed = false;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS,
      viewport: { width: WIDTH, height: HEIGHT }, timeout: 30_000,
    });
    context.setDefaultTimeout(10_000);
    page = context.pages()[0] || await context.newPage();
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      // Failed requests (the wrong password's 401) are logged as errors too and are expected.
      if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text())) {
        problems.push(`CSP: ${msg.text()}`);
      }
    });
    // Nothing but the daemon under test: any other request is a bug (or a CDN dependency).
    await context.route((url) => !url.href.startsWith(`${BASE}/`), (route) => {
      problems.push(`request outside the dashboard: ${route.request().url()}`);
      return route.abort();
    });

    for (const [name, run] of steps) {
      console.log(`[${elapsed()}] ${name}`);
      try {
        await run();
      } catch (err) {
        const errors = await visibleErrors();
        console.error(`FAIL: ${name}: ${err.message.split('\n')[0]}`);
        if (errors.length) console.error(`  the page shows: ${errors.join(' | ')}`);
        if (SHOTS) await page.screenshot({ path: path.join(SHOTS, 'failure.png') }).catch(() => {});
        failed = true;
        break;
      }
    }
    if (!failed && problems.length) {
      console.error(`FAIL: ${problems.length} problem(s) in the page:\n  ${problems.join('\n  ')}`);
      failed = true;
    }
  } catch (err) {
    console.error(`FAIL: ${err.message}`);
    failed = true;
  } finally {
    await context?.close().catch(() => {});
    await rm(userDataDir, { recursive: true, force: true });
    clearTimeout(watchdog);
  }
  if (!failed) console.log(`[${elapsed()}] OK: every step passed`);
  process.exit(failed ? 1 : 0);
}

main();
