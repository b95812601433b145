// The job's outputs on the job page (GET /v1/jobs/{id}/files): a picker of the job's areas
// (each attempt's output/, the job's checkpoints/), the folder's entries with size and time,
// folders to open, files to download, more pages on demand. A download is fetched with the
// token in the Authorization header (never in a URL) and saved from a Blob, so the tab holds
// the file while it is saved: files over kBlobLimit are not fetched here — the view shows
// the `tuneplane cp` command that streams them to disk (and resumes) instead. Links and
// special files are listed, never served (the server refuses them). Folders are opened and
// files fetched by each entry's path_encoded, which names it byte for byte (`path` shows
// bytes that are not UTF-8 as U+FFFD and would name nothing); entries come in the folder's
// own order, a page at a time.
import { api, apiBlob, ApiError, jobPath, query } from './api.js';
import { fill, h } from './dom.js';
import { bytes, when } from './format.js';
import { errorList } from './shell.js';

export const kBlobLimit = 512 * 1024 * 1024;
const kPageSize = 200;

// The `tuneplane cp` source for an entry: JOB[:ATTEMPT|:checkpoints]/PATH.
export function cpSource(id, area, path) {
  const where = area.area === 'checkpoints' ? ':checkpoints' : `:${area.attempt}`;
  return `${id}${where}${path ? `/${path}` : ''}`;
}

// `url` (which has a query) with the path already percent-encoded by the server.
const withPath = (url, encoded) => (encoded ? `${url}&path=${encoded}` : url);

// A shell word: quoted unless it is plainly safe.
const shellWord = (text) => (/^[A-Za-z0-9_./:@=-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`);

export class FilesView {
  constructor(id) {
    this.id = id;
    this.area = h('select', { id: 'files-area' });
    this.crumbs = h('nav', { id: 'files-path', class: 'crumbs' });
    this.body = h('tbody', { id: 'files-body' });
    this.more = h('button', { id: 'files-more', type: 'button', class: 'quiet', hidden: true }, 'More');
    this.status = h('p', { id: 'files-status', class: 'status', role: 'status' });
    this.hint = h('p', { id: 'files-hint', class: 'muted' });
    const refresh = h('button', { id: 'files-refresh', type: 'button', class: 'quiet' }, 'Refresh');
    this.node = h('section', { class: 'card', id: 'files' },
      h('h2', {}, 'Files'),
      h('div', { class: 'filters' }, h('label', {}, 'Folder ', this.area), this.crumbs, refresh),
      h('table', { class: 'table files', id: 'files-table' },
        h('thead', {}, h('tr', {}, ['Name', 'Type', 'Size', 'Modified', ''].map((c) => h('th', {}, c)))),
        this.body),
      this.more, this.status, this.hint);
    this.area.addEventListener('change', () => this.open('', ''));
    refresh.addEventListener('click', () => this.open(this.path, this.pathEncoded));
    this.more.addEventListener('click', () => this.load(this.token));
    this.areas = [];
    this.path = '';  // for display
    this.pathEncoded = '';  // for requests
    this.latest = null;
  }

  // With every refresh of the job: the first time, and when a new attempt appears while the
  // latest one is shown, (re)load; otherwise leave the user where they are.
  update(job) {
    const latest = job.attempts.length ? job.attempts.at(-1).number : null;
    // A folder that could not be listed yet (the attempt is being staged) is tried again.
    if (latest === this.latest && !(this.failed && !this.path)) return;
    const following = this.latest === null || this.area.value === `output:${this.latest}`;
    this.latest = latest;
    if (latest === null) {
      fill(this.status, 'No attempt yet, so no files.');
      return;
    }
    if (following) {
      this.setAreas(job.attempts.map((a) => ({ area: 'output', attempt: a.number, exists: true })), `output:${latest}`);
      this.open('', '');
    }
  }

  setAreas(areas, selected) {
    this.areas = areas;
    const key = (a) => (a.area === 'checkpoints' ? 'checkpoints' : `output:${a.attempt}`);
    const label = (a) => (a.area === 'checkpoints' ? 'checkpoints/ (the job\'s)' : `attempt ${a.attempt} · output/`);
    const current = selected || this.area.value;
    fill(this.area, [...areas].reverse().map((a) => h('option', { value: key(a), disabled: !a.exists }, label(a))));
    if (areas.some((a) => key(a) === current)) this.area.value = current;
  }

  selectedArea() {
    const value = this.area.value || '';
    if (value === 'checkpoints') return { area: 'checkpoints', attempt: null };
    return { area: 'output', attempt: Number(value.split(':')[1]) || null };
  }

  open(path, encoded) {
    this.path = path;
    this.pathEncoded = encoded;
    this.load('');
  }

  async load(token) {
    const area = this.selectedArea();
    const params = { area: area.area, attempt: area.attempt ?? undefined, limit: kPageSize, continue: token || undefined };
    let page;
    try {
      page = await api('GET', withPath(`${jobPath(this.id)}/files${query(params)}`, this.pathEncoded));
    } catch (e) {
      this.failed = true;
      if (!token) fill(this.body);
      this.more.hidden = true;
      fill(this.status, errorList(e.errors || [{ code: '', field: '', message: String(e) }]));
      return;
    }
    this.failed = false;
    this.setAreas(page.areas, this.area.value);
    this.crumbsFor(area);
    const rows = page.items.map((entry) => this.row(area, entry));
    if (token) this.body.append(...rows); else fill(this.body, rows);
    this.token = page.continue;
    this.more.hidden = !page.continue;
    const shown = this.body.children.length;
    fill(this.status, page.items.length || token ? `${shown} entr${shown === 1 ? 'y' : 'ies'}${page.continue ? ', more to load' : ''}` : 'This folder is empty.');
    fill(this.hint, 'From a shell: ', h('code', {}, `tuneplane cp -r ${shellWord(cpSource(this.id, area, this.path))} .`));
  }

  crumbsFor(area) {
    const parts = this.path ? this.path.split('/') : [];
    const encoded = this.pathEncoded ? this.pathEncoded.split('/') : [];  // '/' is never encoded
    const root = area.area === 'checkpoints' ? 'checkpoints' : 'output';
    const link = (label, to, toEncoded) => h('button', { type: 'button', class: 'link', dataset: { path: to }, on: { click: () => this.open(to, toEncoded) } }, label);
    fill(this.crumbs, link(`${root}/`, '', ''), parts.map((p, i) => [link(p, parts.slice(0, i + 1).join('/'), encoded.slice(0, i + 1).join('/')), '/']));
  }

  row(area, entry) {
    let name = entry.name;
    let action = null;
    if (entry.type === 'directory') {
      name = h('button', { type: 'button', class: 'link', on: { click: () => this.open(entry.path, entry.path_encoded) } }, `${entry.name}/`);
    } else if (entry.type === 'file' && entry.size <= kBlobLimit) {
      action = h('button', { type: 'button', class: 'quiet download', on: { click: (event) => this.download(area, entry, event.target) } }, 'Download');
    } else if (entry.type === 'file') {
      action = h('code', { class: 'cp-command', title: 'Too large for the browser: copy it from a shell' },
        `tuneplane cp ${shellWord(cpSource(this.id, area, entry.path))} .`);
    } else {
      action = h('span', { class: 'tag warn' }, entry.type === 'symlink' ? 'link: not served' : 'not served');
    }
    return h('tr', { dataset: { path: entry.path, type: entry.type } },
      h('td', { class: 'mono name' }, name),
      h('td', {}, entry.type),
      h('td', { class: 'num' }, entry.type === 'file' ? bytes(entry.size) : ''),
      h('td', {}, when(entry.modified)),
      h('td', {}, action));
  }

  async download(area, entry, button) {
    button.disabled = true;
    fill(this.status, `Downloading ${entry.path}…`);
    try {
      const blob = await apiBlob(withPath(`${jobPath(this.id)}/files/content${query({ area: area.area, attempt: area.attempt ?? undefined })}`, entry.path_encoded));
      const href = URL.createObjectURL(blob);
      const link = h('a', { href, download: entry.name, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(href), 60000);
      fill(this.status, `Saved ${entry.name} (${bytes(blob.size)}).`);
    } catch (e) {
      fill(this.status, errorList(e instanceof ApiError ? e.errors : [{ code: '', field: '', message: String(e) }]));
    } finally {
      button.disabled = false;
    }
  }
}
