// The /v1 API as the console uses it. The bearer token lives in sessionStorage (this tab
// only, gone when it closes) and travels only in the Authorization header — never in a URL,
// a cookie or a log. Every error is an ApiError carrying the server's {code, field, message}
// list.

const kTokenKey = 'tuneplane.token';

export function token() {
  return sessionStorage.getItem(kTokenKey) || '';
}
export function setToken(value) {
  sessionStorage.setItem(kTokenKey, value);
}
export function forgetToken() {
  sessionStorage.removeItem(kTokenKey);
}

export class ApiError extends Error {
  constructor(status, errors) {
    super(errors.map((e) => e.message).join('; ') || `HTTP ${status}`);
    this.status = status;
    this.errors = errors;
  }
}

// Fired on window when the server refuses the token, so the page can ask for another.
export const kUnauthorized = 'tuneplane:unauthorized';

// REQUIRES: path starts with /v1/. Resolves to the parsed JSON body.
export async function api(method, path, { body, contentType } = {}) {
  const headers = { Accept: 'application/json', Authorization: `Bearer ${token()}` };
  if (body !== undefined) headers['Content-Type'] = contentType || 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method, headers, body, cache: 'no-store', credentials: 'omit', redirect: 'error',
    });
  } catch (e) {
    throw new ApiError(0, [{ code: 'console.network', field: '', message: `the server did not answer (${e.message})` }]);
  }
  let data = null;
  const text = await response.text();
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const errors = data && Array.isArray(data.errors)
      ? data.errors
      : [{ code: 'console.http', field: '', message: `HTTP ${response.status}` }];
    if (response.status === 401) window.dispatchEvent(new Event(kUnauthorized));
    throw new ApiError(response.status, errors);
  }
  return data;
}

// REQUIRES: path starts with /v1/. A download: resolves to the body as a Blob, with the
// same errors as api().
export async function apiBlob(path) {
  let response;
  try {
    response = await fetch(path, {
      headers: { Accept: 'application/octet-stream, application/json', Authorization: `Bearer ${token()}` },
      cache: 'no-store', credentials: 'omit', redirect: 'error',
    });
  } catch (e) {
    throw new ApiError(0, [{ code: 'console.network', field: '', message: `the server did not answer (${e.message})` }]);
  }
  if (response.ok) return response.blob();
  let data = null;
  try {
    data = JSON.parse(await response.text());
  } catch {
    data = null;
  }
  if (response.status === 401) window.dispatchEvent(new Event(kUnauthorized));
  throw new ApiError(response.status, data && Array.isArray(data.errors)
    ? data.errors : [{ code: 'console.http', field: '', message: `HTTP ${response.status}` }]);
}

export const jobPath = (id) => `/v1/jobs/${encodeURIComponent(id)}`;

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
