// The job page (/ui/job.html?id=ID): the job and its reason, why it waits in Slurm's queue
// and until when, its preemptions, Cancel (with a confirmation), every attempt with its cause,
// Slurm's grace time while it is being preempted, and its Slurm components (job
// ids, SLUIDs, states, exit codes, nodes), the log viewer (the server's 64 KiB / 2,000-line
// tail per component and stream, followed while the attempt runs), the job's files
// (files_view.js), the events timeline and the spec as submitted. Refreshes every 2 s until
// the job has ended.
import { api, ApiError, jobPath, query } from './api.js';
import { fill, h } from './dom.js';
import { age, bytes, isTerminal, orDash, phaseClass, reasonInWords, until, when } from './format.js';
import { FilesView } from './files_view.js';
import { errorList, poll, startPage } from './shell.js';

const kRefreshMs = 2000;

function definitions(pairs) {
  return h('dl', { class: 'facts' }, pairs.filter(([, v]) => v !== undefined).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

function componentsTable(attempt) {
  const rows = (attempt.components || []).map((c) => h('tr', { dataset: { pool: c.pool } },
    h('td', { class: 'num' }, String(c.index)),
    h('td', {}, c.pool),
    h('td', { class: 'mono slurm-job-id' }, orDash(c.job_id)),
    h('td', { class: 'mono sluid' }, orDash(c.sluid)),
    h('td', { class: 'mono' }, (c.state || []).join(', ') || '—'),
    h('td', {}, orDash(reasonInWords(c.reason))),
    h('td', { class: 'num exit-code' }, orDash(c.exit_code)),
    h('td', { class: 'num' }, orDash(c.signal)),
    h('td', { class: 'mono nodes' }, orDash(c.nodes)),
    // A pending component's start_time is Slurm's estimate, shown in the waiting card.
    h('td', {}, (c.state || [])[0] === 'PENDING' ? '—' : when(c.start_time)),
    h('td', {}, when(c.end_time))));
  if (!rows.length) return h('p', { class: 'muted' }, 'Slurm has not reported this attempt\'s components yet.');
  return h('table', { class: 'table components' },
    h('thead', {}, h('tr', {}, ['#', 'Pool', 'Slurm job', 'SLUID', 'State', 'Reason', 'Exit', 'Signal', 'Nodes', 'Start', 'End'].map((c) => h('th', {}, c)))),
    h('tbody', {}, rows));
}

// Why the job waits in Slurm's queue and until when (the API's `waiting`), per component.
function waitingCard(waiting) {
  if (!waiting) return null;
  const from = waiting.as_of ? `Slurm's queue as read at ${when(waiting.as_of)}` : 'as the control loop last saw it';
  return h('section', { id: 'waiting', class: 'card' },
    h('h2', {}, `Waiting in Slurm's queue (attempt ${waiting.attempt})`),
    waiting.components.map((c) => h('div', { class: 'waiting-component', dataset: { pool: c.pool || '' } },
      c.pool ? h('h3', {}, `Pool ${c.pool}`) : null,
      definitions([
        ['Why', h('span', { class: 'waiting-reason' }, c.reason_text ? `${c.reason_text} (${c.reason})` : orDash(c.reason))],
        ['Place', h('span', { class: 'waiting-place' }, c.position
          ? `${c.position} of ${c.pending_in_partition} pending jobs in partition ${c.partition} (by Slurm's priority)` : '—')],
        ['Expected start', h('span', { class: 'waiting-start' }, c.estimated_start
          ? `${until(c.estimated_start)} (${when(c.estimated_start)}), Slurm's estimate` : 'Slurm has no estimate yet')],
      ]))),
    h('p', { class: 'muted' }, from));
}

// A running component Slurm chose to preempt is in its grace time: warned, and ended
// PREEMPTED by its end_time (issue 47).
function graceTime(a) {
  if (a.terminal) return undefined;
  const c = (a.components || []).find((x) => x.preempt_time && (x.state || [])[0] === 'RUNNING');
  if (!c) return undefined;
  return h('span', { class: 'preemption' },
    `being preempted since ${when(c.preempt_time)}; Slurm ends it by ${when(c.end_time)}`);
}

function attemptCard(a) {
  return h('section', { class: 'card attempt', dataset: { attempt: String(a.number) } },
    h('h3', {}, `Attempt ${a.number} `, h('span', { class: phaseClass(a.phase) }, a.phase)),
    a.reason ? h('p', { class: 'reason' }, reasonInWords(a.reason)) : null,
    definitions([
      ['Cause', h('span', { class: `cause cause-${a.cause}` }, a.cause)],
      ['Preemption', graceTime(a)],
      ['Slurm job', orDash(a.job_id)],
      ['Submit token', h('code', {}, a.submit_token)],
      ['Staging directory', h('code', {}, a.staging_dir)],
      ['Created', when(a.created)],
      ['Submitted', when(a.submitted)],
      ['Ended', when(a.ended)],
      ['Abandoned by', a.abandoned_by ? `${a.abandoned_by}: ${a.abandon_reason}` : undefined],
    ]),
    componentsTable(a));
}

function eventItem(e) {
  return h('li', {},
    h('time', { datetime: e.time }, when(e.time)),
    h('span', { class: 'transition' }, e.from ? `${e.from} → ${e.to}` : e.to),
    e.attempt ? h('span', { class: 'tag' }, `attempt ${e.attempt}`) : null,
    h('span', { class: 'reason' }, e.reason),
    e.actor ? h('span', { class: 'muted' }, ` (${e.actor})`) : null);
}

// The pools of an attempt: its components', or, before Slurm answered, the spec's names are
// unknown here — the server then picks the first pool itself.
const poolsOf = (attempt) => (attempt.components || []).map((c) => c.pool);

// Replaces a select's options only when they changed, so the user's choice survives a refresh.
function setOptions(select, values, labels = values) {
  const key = values.join('\n');
  if (select.dataset.key === key) return;
  const previous = select.value;
  fill(select, values.map((v, i) => h('option', { value: v }, labels[i])));
  select.dataset.key = key;
  if (values.includes(previous)) select.value = previous;
}

class LogViewer {
  constructor(id) {
    this.id = id;
    this.attempt = h('select', { id: 'log-attempt' });
    this.component = h('select', { id: 'log-component' });
    this.stream = h('select', { id: 'log-stream' }, h('option', { value: 'stdout' }, 'stdout'), h('option', { value: 'stderr' }, 'stderr'));
    this.follow = h('input', { id: 'log-follow', type: 'checkbox', checked: true });
    this.meta = h('span', { id: 'log-meta', class: 'muted' });
    this.truncated = h('span', { id: 'log-truncated', class: 'tag warn', hidden: true });
    this.text = h('pre', { id: 'log', class: 'log' });
    this.node = h('section', { class: 'card', id: 'logs' },
      h('h2', {}, 'Logs'),
      h('div', { class: 'filters' },
        h('label', {}, 'Attempt ', this.attempt), h('label', {}, 'Component ', this.component),
        h('label', {}, 'Stream ', this.stream), h('label', {}, this.follow, ' follow'), this.truncated, this.meta),
      this.text);
    for (const s of [this.attempt, this.component, this.stream]) s.addEventListener('change', () => this.load());
    this.job = null;
  }

  // Called with every refresh of the job. While "follow" is on it reloads the log until the
  // attempt shown has ended and its last state was read, and moves to a new attempt (a
  // retry) if the newest one was shown.
  update(job) {
    const first = this.job === null;
    const latest = job.attempts.length ? String(job.attempts.at(-1).number) : '';
    const onLatest = this.attempt.value === '' || this.attempt.value === this.latest;
    this.job = job;
    this.latest = latest;
    const numbers = job.attempts.map((a) => String(a.number)).reverse();
    setOptions(this.attempt, numbers, numbers.map((n) => `#${n}`));
    if (onLatest && latest && this.follow.checked) this.attempt.value = latest;
    const attempt = this.selectedAttempt();
    setOptions(this.component, attempt ? poolsOf(attempt) : []);
    if (first || (this.follow.checked && attempt && this.finalKey !== this.key())) this.load();
  }

  key() {
    return `${this.attempt.value}/${this.component.value}/${this.stream.value}`;
  }

  selectedAttempt() {
    return this.job && this.job.attempts.find((a) => String(a.number) === this.attempt.value);
  }

  async load() {
    const attempt = this.selectedAttempt();
    if (!attempt) return fill(this.text, 'No attempt yet.');
    const ended = isTerminal(attempt);
    try {
      const log = await api('GET', `${jobPath(this.id)}/logs${query({
        attempt: attempt.number, component: this.component.value, stream: this.stream.value })}`);
      const atBottom = this.text.scrollTop + this.text.clientHeight >= this.text.scrollHeight - 4;
      fill(this.text, log.content || (log.missing_reason ? `(${log.missing_reason})` : '(empty)'));
      this.truncated.hidden = !log.truncated;
      fill(this.truncated, log.truncated ? `truncated: the last ${log.lines} lines of ${bytes(log.bytes)}` : '');
      fill(this.meta, `${log.component} · ${log.stream} · ${bytes(log.bytes)} · ${log.lines} lines`);
      if (this.follow.checked && atBottom) this.text.scrollTop = this.text.scrollHeight;
      // Once an ended attempt's log was read, following it again changes nothing.
      this.finalKey = ended ? this.key() : null;
    } catch (e) {
      fill(this.text, e instanceof ApiError ? e.message : String(e));
    }
  }
}

function cancelBox(job, onDone) {
  const box = h('div', { id: 'cancel-box', class: 'confirm', hidden: true },
    h('p', {}, 'Cancel ', h('strong', {}, job.name), '? Slurm stops every component; the job ends Cancelled.'));
  const yes = h('button', { id: 'cancel-confirm', type: 'button', class: 'danger' }, 'Yes, cancel the job');
  const no = h('button', { id: 'cancel-keep', type: 'button', class: 'quiet' }, 'Keep it running');
  const error = h('div', { id: 'cancel-error' });
  box.append(yes, no, error);
  const ask = h('button', { id: 'cancel', type: 'button', class: 'danger' }, 'Cancel job…');
  ask.addEventListener('click', () => { box.hidden = false; ask.hidden = true; });
  no.addEventListener('click', () => { box.hidden = true; ask.hidden = false; });
  yes.addEventListener('click', async () => {
    yes.disabled = true;
    try {
      await api('POST', `${jobPath(job.id)}/cancel`);
      box.hidden = true;
      onDone();
    } catch (e) {
      fill(error, errorList(e.errors || [{ code: '', field: '', message: String(e) }]));
      yes.disabled = false;
    }
  });
  return h('div', { class: 'actions' }, ask, box);
}

startPage('job', (who, main) => {
  const id = new URLSearchParams(window.location.search).get('id') || '';
  const head = h('div', { id: 'job-head' });
  const waiting = h('div', { id: 'job-waiting' });
  const actions = h('div', { id: 'job-actions' });
  const attempts = h('div', { id: 'attempts' });
  const events = h('ol', { id: 'events', class: 'timeline' });
  const spec = h('pre', { id: 'spec', class: 'spec' });
  const logs = new LogViewer(id);
  const files = new FilesView(id);
  fill(main, head, waiting, actions,
    h('h2', {}, 'Attempts'), attempts, logs.node, files.node,
    h('section', { class: 'card' }, h('h2', {}, 'Events'), events),
    h('section', { class: 'card' }, h('h2', {}, 'Spec as submitted'), spec));

  let shownCancel = null;
  const refresh = async () => {
    let job;
    try {
      job = await api('GET', jobPath(id));
    } catch (e) {
      fill(head, h('h1', {}, id || 'No job named'), errorList(e.errors || []));
      return e.status !== 404;
    }
    document.title = `TunePlane · ${job.name}`;
    fill(head,
      h('h1', {}, h('span', { id: 'job-name' }, job.name), ' ', h('span', { id: 'job-phase', class: phaseClass(job.phase) }, job.phase)),
      h('p', { id: 'job-reason', class: 'reason' }, reasonInWords(job.reason)),
      definitions([
        ['Id', h('code', {}, job.id)],
        ['Owner', job.owner],
        ['Created', `${when(job.created)} (${age(job.created)} ago)`],
        ['Labels', h('span', { id: 'job-labels' }, Object.entries(job.labels || {}).map(([k, v]) => h('span', { class: 'tag' }, `${k}=${v}`)))],
        ['Cancel requested', job.cancel_requested ? `by ${job.cancel_requested_by}` : undefined],
        ['Next attempt at', job.next_attempt_at ? when(job.next_attempt_at) : undefined],
        ['Preemptions', job.preemptions ? h('span', { id: 'job-preemptions' },
          `${job.preemptions} (retried without using one of retry.max_attempts)`) : undefined],
      ]));
    fill(waiting, waitingCard(job.waiting));
    const cancellable = !isTerminal(job) && !job.cancel_requested;
    if (cancellable !== shownCancel) {
      fill(actions, cancellable ? cancelBox(job, () => refresh()) : null);
      shownCancel = cancellable;
    }
    fill(attempts, job.attempts.length ? [...job.attempts].reverse().map(attemptCard)
      : h('p', { class: 'muted' }, 'No attempt yet: the control loop stages the first one shortly.'));
    if (spec.textContent !== job.spec) fill(spec, job.spec);
    logs.update(job);
    files.update(job);
    try {
      const list = await api('GET', `${jobPath(id)}/events`);
      fill(events, list.items.map(eventItem));
    } catch (e) {
      fill(events, h('li', { class: 'error' }, e.message));
    }
    main.dataset.final = String(isTerminal(job));
    return !isTerminal(job);
  };
  poll(refresh, kRefreshMs);
});
