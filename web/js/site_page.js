// The site page (/ui/site.html): what this backend runs and refuses and why
// (GET /v1/capabilities), and, for an admin, doctor's checks of the site (GET /v1/doctor:
// slurmrestd, the token, partitions, GPU-series constraints, staging, artifacts).
import { api } from './api.js';
import { fill, h } from './dom.js';
import { errorList, startPage } from './shell.js';

const yesNo = (supported) => h('span', { class: supported ? 'phase phase-ok' : 'phase phase-bad' }, supported ? 'yes' : 'no');

function table(columns, rows, id) {
  return h('table', { class: 'table', id },
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', {}, c)))),
    h('tbody', {}, rows.map((cells) => h('tr', {}, cells.map((c) => h('td', {}, c))))));
}

// The Slurm REST API version spoken, how it was chosen, and what TunePlane does without on it.
function slurmApi(c) {
  const a = c.slurm_api || {};
  const how = a.configured === 'auto'
    ? (a.negotiated ? `chosen by slurm.api_version: auto${a.offered && a.offered.length ? ` from ${a.offered.join(', ')}` : ''}` : 'slurm.api_version: auto, not negotiated yet')
    : `set by slurm.api_version`;
  const release = a.release ? ` · Slurm ${a.release}` : '';
  return [
    h('p', { id: 'slurm-api' }, `Slurm REST API ${c.slurm_api_version} (${how})${release}`),
    (a.degradations || []).length
      ? h('ul', { id: 'slurm-api-degradations' }, a.degradations.map((d) => h('li', {}, h('span', { class: 'phase doctor-warn' }, 'degraded'), ` ${d.what}: ${d.instead}`)))
      : null,
  ];
}

function capabilities(c) {
  return h('section', { class: 'card', id: 'capabilities' },
    h('h2', {}, 'Capabilities'),
    h('p', {}, `Backend ${c.backend} · slurmrestd API ${c.slurm_api_version} · container runtime ${c.container_runtime} · logs: the last ${c.limits.log_lines} lines / ${c.limits.log_bytes / 1024} KiB per file`),
    slurmApi(c),
    h('h3', {}, 'Kinds'),
    table(['Kind', 'Supported', 'Why not'], Object.entries(c.kinds).map(([k, v]) => [k, yesNo(v.supported), v.reason || ''])),
    h('h3', {}, 'Features'),
    table(['Feature', 'Supported', 'Why not'], Object.entries(c.features).map(([k, v]) => [k, yesNo(v.supported), v.reason || ''])),
    h('h3', {}, 'Partitions'),
    table(['Use', 'Slurm partition'], Object.entries(c.partitions).map(([k, v]) => [k, v || '—'])),
    h('h3', {}, 'GPU series'),
    table(['Series', 'GPUs/node', 'GRES type', 'Constraint', 'Usable'],
      c.gpu_series.map((s) => [s.name, String(s.gpus_per_node), s.gres_type || '—', s.slurm_constraint || '—',
        h('span', {}, yesNo(s.usable), s.reason ? ` ${s.reason}` : '')])),
    h('h3', {}, 'Runtimes'),
    table(['Runtime id', 'Format', 'Frameworks'], c.runtimes.map((r) => [h('code', {}, r.id), r.format, r.frameworks.join(', ')])),
    h('h3', {}, 'CPU-only jobs'),
    h('ul', {}, c.cpu_only_rules.map((r) => h('li', {}, r))));
}

function doctorReport(report) {
  const s = report.summary;
  return [
    h('p', { id: 'doctor-summary' }, h('span', { class: report.passed ? 'phase phase-ok' : 'phase phase-bad' }, report.passed ? 'passed' : 'failed'),
      ` ${s.ok} ok · ${s.warn} warn · ${s.fail} fail · ${s.skip} skipped`),
    table(['Check', 'Result', 'Finding', 'Fix'], report.checks.map((c) => [
      h('code', {}, c.name),
      h('span', { class: `phase doctor-${c.status}` }, c.status),
      c.message,
      c.fix || '']), 'doctor-checks'),
  ];
}

startPage('site', async (who, main) => {
  const caps = h('div', { id: 'caps' }, h('p', { class: 'muted' }, 'Loading…'));
  const doctor = h('div', { id: 'doctor' });
  const run = h('button', { id: 'doctor-run', type: 'button' }, 'Run the checks again');
  fill(main, h('h1', {}, 'Site'), caps,
    h('section', { class: 'card' }, h('h2', {}, 'Doctor'),
      who.admin
        ? [h('p', { class: 'muted' }, 'The checks of `tuneplane doctor`, run by the server now; nothing is submitted.'), run, doctor]
        : h('p', { id: 'doctor-admin-only', class: 'muted' }, 'Doctor\'s checks are for administrators (they show the site\'s configuration); ask your operator or run `tuneplane doctor`.')));
  const runDoctor = async () => {
    run.disabled = true;
    fill(doctor, h('p', { class: 'muted' }, 'Running the checks…'));
    try {
      fill(doctor, doctorReport(await api('GET', '/v1/doctor')));
    } catch (e) {
      fill(doctor, errorList(e.errors || []));
    }
    run.disabled = false;
  };
  run.addEventListener('click', runDoctor);
  try {
    fill(caps, capabilities(await api('GET', '/v1/capabilities')));
  } catch (e) {
    fill(caps, errorList(e.errors || []));
  }
  if (who.admin) runDoctor();
});
