// The API client: the token, JSON requests and the live event stream (docs/api.md).

const API = '/api/v1';
const TOKEN_KEY = 'warren-token';

// takeToken keeps the token the page was opened with (?token=) for this tab, and takes it out
// of the address bar, so it lands in no history entry, bookmark or screenshot.
export function takeToken() {
  const url = new URL(location.href);
  const t = url.searchParams.get('token');
  if (t) {
    sessionStorage.setItem(TOKEN_KEY, t);
    url.searchParams.delete('token');
    history.replaceState(history.state, '', url.pathname + url.search + url.hash);
  }
}

// token is the token requests carry ('' when the page has none).
export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

// setToken keeps a token a person typed in.
export function setToken(t) {
  sessionStorage.setItem(TOKEN_KEY, t.trim());
}

// APIError is an answer of the API that is not a success: its status and its error message.
export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// unauthorized is called when the API refuses the token (401).
let unauthorized = () => {};

// onUnauthorized sets what a refused token does (the page asks for one).
export function onUnauthorized(fn) {
  unauthorized = fn;
}

// api sends one request to the API (path after /api/v1) with the token, a JSON body when body is
// given (an object, or JSON text already made), and returns the decoded answer. A failure is an
// APIError carrying the API's own message.
export async function api(path, {method = 'GET', body} = {}) {
  const headers = {Authorization: 'Bearer ' + token()};
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(API + path, {method, headers, body: payload, cache: 'no-store'});
  } catch (err) {
    throw new APIError(0, 'the server does not answer (' + err.message + ')');
  }
  const text = await resp.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!resp.ok) {
    if (resp.status === 401) {
      unauthorized();
    }
    throw new APIError(resp.status, (data && data.error) || `${resp.status} ${resp.statusText}`);
  }
  return data;
}

// runPath is the API path of a run, or of one of its routes.
export function runPath(id, route = '', params = null) {
  let p = '/runs/' + encodeURIComponent(id) + route;
  if (params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
      if (v !== '' && v !== null && v !== undefined) {
        q.set(k, String(v));
      }
    }
    const s = q.toString();
    if (s) {
      p += '?' + s;
    }
  }
  return p;
}

// events opens the run's live trace after seq `after`. A browser's EventSource cannot set
// headers, so the token goes in the query, as the API allows for this route.
export function events(id, after) {
  const q = new URLSearchParams({token: token(), after: String(after)});
  return new EventSource(API + runPath(id, '/events') + '?' + q.toString());
}
