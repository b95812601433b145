// The jobs page (/): the caller's jobs (an admin's: everyone's), newest first, filtered by
// phase (on the server) and by a part of the name (here), refreshed every 2 s without a
// reload; a job waiting in Slurm's queue says its place and Slurm's start estimate.
import { api, query } from './api.js';
import { byId, fill, h } from './dom.js';
import { age, kJobPhases, phaseClass, reasonInWords, waitingLine } from './format.js';
import { poll, startPage } from './shell.js';

const kRefreshMs = 2000;
const kLimit = 200;

function row(job) {
  const attempts = job.attempt_count || 0;
  return h('tr', { dataset: { id: job.id } },
    h('td', { class: 'name' }, h('a', { href: `/ui/job.html?id=${encodeURIComponent(job.id)}` }, job.name),
      h('div', { class: 'sub' }, job.id)),
    h('td', {}, h('span', { class: phaseClass(job.phase) }, job.phase)),
    h('td', { class: 'reason' }, reasonInWords(job.reason),
      job.waiting ? h('div', { class: 'sub waiting' }, waitingLine(job.waiting)) : null),
    h('td', { class: 'num' }, String(attempts)),
    h('td', { class: 'num', title: job.created || '' }, age(job.created)),
    h('td', {}, job.owner));
}

startPage('jobs', (who, main) => {
  const phase = h('select', { id: 'filter-phase' }, h('option', { value: '' }, 'every phase'),
    kJobPhases.map((p) => h('option', { value: p }, p)));
  const name = h('input', { id: 'filter-name', type: 'search', placeholder: 'name contains…' });
  const body = h('tbody', { id: 'jobs-body' });
  const status = h('p', { id: 'jobs-status', class: 'status' });
  fill(main,
    h('div', { class: 'title-row' }, h('h1', {}, who.admin ? 'All jobs' : 'My jobs'),
      h('a', { class: 'button', href: '/ui/submit.html' }, 'Submit a job')),
    h('div', { class: 'filters' }, h('label', {}, 'Phase ', phase), h('label', {}, 'Name ', name)),
    h('table', { id: 'jobs', class: 'table' },
      h('thead', {}, h('tr', {}, ['Name', 'Phase', 'Reason', 'Attempts', 'Age', 'Owner'].map((c) => h('th', {}, c)))),
      body),
    status);

  let items = [];
  const render = () => {
    const part = name.value.trim().toLowerCase();
    const shown = items.filter((j) => !part || j.name.toLowerCase().includes(part) || j.id.includes(part));
    fill(body, shown.map(row));
    fill(status, shown.length ? `${shown.length} job${shown.length === 1 ? '' : 's'}` : 'No jobs match.',
      ` · refreshed ${new Date().toLocaleTimeString()}`);
  };
  const refresh = async () => {
    try {
      const page = await api('GET', `/v1/jobs${query({ phase: phase.value, limit: kLimit })}`);
      items = page.items;
      render();
      byId('jobs-status').classList.remove('error');
    } catch (e) {
      fill(status, `Could not refresh: ${e.message}`);
      status.classList.add('error');
    }
  };
  phase.addEventListener('change', refresh);
  name.addEventListener('input', render);
  poll(refresh, kRefreshMs);
});
