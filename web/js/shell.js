// What every page shares: the header (navigation, who is signed in, "Forget token"), the
// token form shown until a token works, and a bounded poller. A page calls
// startPage(render); render({user, admin}) runs once the token is accepted by /v1/whoami.
import { api, forgetToken, kUnauthorized, setToken, token } from './api.js';
import { byId, fill, h } from './dom.js';

function header(current) {
  const link = (href, label, name) => h('a', { href, class: name === current ? 'current' : null }, label);
  return h('header', { class: 'bar' },
    h('a', { class: 'brand', href: '/' }, 'TunePlane'),
    h('nav', {},
      link('/', 'Jobs', 'jobs'), link('/ui/submit.html', 'Submit', 'submit'), link('/ui/usage.html', 'Usage', 'usage'),
      link('/ui/site.html', 'Site', 'site')),
    h('span', { id: 'who', class: 'who' }),
    h('button', { id: 'forget', type: 'button', class: 'quiet', hidden: true }, 'Forget token'));
}

function loginForm() {
  return h('section', { id: 'login', class: 'card login', hidden: true },
    h('h1', {}, 'Sign in'),
    h('p', {}, 'Paste the API token your operator gave you. It stays in this browser tab only (session storage) and is sent only to this server, in the Authorization header.'),
    h('form', { id: 'login-form', autocomplete: 'off' },
      h('label', { for: 'token' }, 'API token'),
      h('input', { id: 'token', name: 'token', type: 'password', required: true, spellcheck: 'false', autocomplete: 'off' }),
      h('button', { id: 'sign-in', type: 'submit' }, 'Sign in')),
    h('p', { id: 'login-error', class: 'error', role: 'alert' }));
}

// page: 'jobs' | 'job' | 'submit' | 'usage' | 'site'; render(who) builds the page inside <main>.
export function startPage(page, render) {
  const main = h('main', { id: 'main', hidden: true });
  document.body.append(header(page), loginForm(), main);
  const showLogin = (message) => {
    main.hidden = true;
    byId('forget').hidden = true;
    fill(byId('who'));
    byId('login').hidden = false;
    fill(byId('login-error'), message || '');
    byId('token').focus();
  };
  let rendered = false;
  const enter = async () => {
    // Signing in again after the server refused the token: start the page afresh (its
    // pollers and content belong to the old token).
    if (rendered) return window.location.reload();
    let who;
    try {
      who = await api('GET', '/v1/whoami');
    } catch (e) {
      forgetToken();
      return showLogin(e.status === 401 ? 'The server does not know this token.' : e.message);
    }
    byId('login').hidden = true;
    byId('forget').hidden = false;
    fill(byId('who'), who.user, who.admin ? h('span', { class: 'tag' }, 'admin') : null);
    main.hidden = false;
    rendered = true;
    await render(who, main);
  };
  byId('login-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const value = byId('token').value.trim();
    byId('token').value = '';
    if (!value) return;
    setToken(value);
    enter();
  });
  byId('forget').addEventListener('click', () => {
    forgetToken();
    window.location.reload();
  });
  window.addEventListener(kUnauthorized, () => {
    forgetToken();
    showLogin('The server refused the token (it may have been revoked). Sign in again.');
  });
  if (token()) enter(); else showLogin('');
}

// Calls `tick` now and then every `ms` until it returns false or stop() is called. One call
// at a time: a slow answer delays the next call instead of piling calls up.
export function poll(tick, ms) {
  let stopped = false;
  let timer = null;
  const run = async () => {
    timer = null;
    if (stopped) return;
    let more = true;
    try {
      // Without a token (refused, or forgotten) there is nothing to ask: wait for sign-in.
      if (token()) more = (await tick()) !== false;
    } catch (e) {
      console.warn('poll:', e);
    }
    if (!stopped && more) timer = setTimeout(run, ms);
  };
  run();
  return { stop() { stopped = true; if (timer) clearTimeout(timer); } };
}

// An error list (the API's {code, field, message}) as elements.
export function errorList(errors, id) {
  return h('ul', { class: 'errors', id },
    errors.map((e) => h('li', { class: 'error-item' },
      e.field ? h('code', { class: 'field' }, e.field) : null,
      h('span', { class: 'message' }, e.message),
      h('span', { class: 'code' }, e.code))));
}
