// The REST API client (docs/api.md, "The REST API"): JSON in and out, the CSRF token sent on
// every request that changes something, and a 401 handed to the app so it can show the login.

// Kept in memory only: a token in localStorage would outlive the session and be readable by
// any script that ever ran on this origin.
let csrf = null;
let onUnauthorized = () => {};

export function setCsrf(token) {
  csrf = token || null;
}

export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const SAFE = new Set(['GET', 'HEAD']);

// Calls the API and returns the decoded JSON (null for an empty answer such as 204).
// body: an object (sent as JSON) or a Blob/File (sent as it is, e.g. a config archive).
export async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (!SAFE.has(method) && csrf) headers['X-CSRF-Token'] = csrf;
  if (body instanceof Blob) {
    headers['Content-Type'] = body.type || 'application/x-tar';
    init.body = body;
  } else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }

  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'dnsmoat is not reachable');
  }
  const text = await res.text();
  let data = null;
  if (text && (res.headers.get('Content-Type') || '').includes('json')) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (res.ok) return data;

  let message = (data && data.error) || `${res.status} ${res.statusText}`.trim();
  if (res.status === 429) {
    const wait = res.headers.get('Retry-After');
    if (wait) message += ` (try again in ${wait} s)`;
  }
  // A failed login is a wrong password, not an expired session.
  if (res.status === 401 && path !== '/api/auth/login') {
    csrf = null;
    onUnauthorized();
  }
  throw new ApiError(res.status, message);
}

// A query string from an object, leaving out empty values.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}
