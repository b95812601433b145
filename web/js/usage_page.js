// The usage page (/ui/usage.html): CPU-hours and GPU-hours from Slurm's own accounting
// (GET /v1/usage) over a window — the last day, 7 or 30 days, or dates picked — grouped by
// user, team (Slurm account), owner or TunePlane job, with TunePlane's share and the total. A
// user sees their own runs, an admin everyone's (the server decides). Read once per change,
// never polled: each read asks slurmdbd. A site without accounting gets the server's message,
// never figures.
import { api, query } from './api.js';
import { fill, h } from './dom.js';
import { when } from './format.js';
import { errorList, startPage } from './shell.js';

const kWindows = [['1', 'the last day'], ['7', 'the last 7 days'], ['30', 'the last 30 days'], ['dates', 'from … to …']];
const kGroupings = [['user', 'Slurm user'], ['team', 'team (Slurm account)'], ['owner', 'owner (TunePlane user)'], ['job', 'TunePlane job']];

const hours = (x) => (typeof x === 'number' ? x.toFixed(2) : '—');

function figures(f, split) {
  const cells = [hours(f.cpu_hours), hours(f.gpu_hours), String(f.runs ?? 0)];
  if (split) cells.push(hours(f.tuneplane?.cpu_hours), hours(f.tuneplane?.gpu_hours));
  return cells.map((c) => h('td', { class: 'num' }, c));
}

// The report as a table: the grouping's columns, the figures, TOTAL last.
function reportTable(report) {
  const by = report.by;
  const split = by === 'user' || by === 'team';
  const keyColumns = by === 'job' ? ['Job', 'Owner', 'Slurm user', 'Team', 'Attempts']
    : [Object.fromEntries(kGroupings)[by] || by];
  const columns = [...keyColumns, 'CPU-hours', 'GPU-hours', 'Runs', ...(split ? ['TunePlane CPU-h', 'TunePlane GPU-h'] : [])];
  const rows = report.items.map((item) => {
    const key = item[by];
    const keyCells = by === 'job'
      ? [h('td', {}, h('a', { href: `/ui/job.html?id=${encodeURIComponent(key)}` }, key)), h('td', {}, item.owner),
        h('td', {}, item.user), h('td', {}, item.team || '—'), h('td', {}, (item.attempts || []).join(', '))]
      : [h('td', {}, key || '—')];
    return h('tr', { dataset: { key: key || '' } }, keyCells, figures(item, split));
  });
  const total = h('tr', { class: 'total', id: 'usage-total' },
    h('td', { colspan: String(keyColumns.length) }, 'Total'), figures(report.total, split));
  return h('table', { class: 'table', id: 'usage-table' },
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', {}, c)))),
    h('tbody', { id: 'usage-body' }, rows, total));
}

startPage('usage', (who, main) => {
  const by = h('select', { id: 'usage-by' }, kGroupings.map(([v, label]) => h('option', { value: v }, label)));
  const windowSelect = h('select', { id: 'usage-window' },
    kWindows.map(([v, label]) => h('option', { value: v, selected: v === '7' }, label)));
  const since = h('input', { id: 'usage-since', type: 'date', hidden: true });
  const until = h('input', { id: 'usage-until', type: 'date', hidden: true });
  const line = h('p', { id: 'usage-line', class: 'muted' });
  const result = h('div', { id: 'usage-result' }, h('p', { class: 'muted' }, 'Loading…'));
  fill(main,
    h('h1', {}, who.admin ? 'Usage: every user' : 'Usage: your runs'),
    h('p', { class: 'muted' }, 'CPU-hours and GPU-hours as Slurm\'s accounting (slurmdbd) recorded them: every run of a job counts, requeued ones too; a run is clipped to the window. "TunePlane" is the share of runs of TunePlane jobs.'),
    h('div', { class: 'filters' }, h('label', {}, 'By ', by), h('label', {}, 'Window ', windowSelect),
      h('label', {}, since), h('label', {}, until)),
    line, result);

  let generation = 0;
  const refresh = async () => {
    const mine = ++generation;
    const dates = windowSelect.value === 'dates';
    since.hidden = !dates;
    until.hidden = !dates;
    const params = { by: by.value };
    if (dates) {
      if (!since.value) return fill(result, h('p', { class: 'muted' }, 'Pick the first day.'));
      params.since = since.value;
      if (until.value) params.until = until.value;
    } else {
      params.since = new Date(Date.now() - Number(windowSelect.value) * 86400e3).toISOString();
    }
    fill(result, h('p', { class: 'muted' }, 'Reading Slurm\'s accounting…'));
    try {
      const report = await api('GET', `/v1/usage${query(params)}`);
      if (mine !== generation) return;
      fill(line, `From ${when(report.since)} to ${when(report.until)} · ${report.scope === 'all' ? 'every user\'s runs' : 'your runs only'}`);
      fill(result, report.items.length ? reportTable(report)
        : [h('p', { id: 'usage-empty', class: 'muted' }, 'No runs in this window.'), reportTable(report)]);
    } catch (e) {
      if (mine !== generation) return;
      fill(line);
      const unavailable = (e.errors || []).some((x) => x.code === 'usage.accounting_unavailable');
      fill(result,
        unavailable ? h('p', { id: 'usage-unavailable', class: 'error' }, 'Accounting is not available on this site: usage comes from Slurm\'s slurmdbd, which this site\'s slurmrestd does not serve. No figures are shown.') : null,
        errorList(e.errors || [], 'usage-errors'));
    }
  };
  for (const control of [by, windowSelect, since, until]) control.addEventListener('change', refresh);
  refresh();
});
