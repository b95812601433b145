// How values are shown: phase colours, reasons in words, ages and times. Pure functions
// returning strings (the caller puts them in text nodes).

export const kJobPhases = ['Pending', 'Staging', 'Submitting', 'SubmitUnknown', 'Queued', 'Running',
  'Releasing', 'Retrying', 'Cancelling', 'Unknown', 'Succeeded', 'Failed', 'Cancelled'];

// Whether a job or an attempt (as the API returns it) has ended: the server says so in
// `terminal`, so the console keeps no list of its own.
export const isTerminal = (item) => item?.terminal === true;

// The CSS class of a phase's badge (console.css colours them).
export function phaseClass(phase) {
  if (phase === 'Succeeded') return 'phase phase-ok';
  if (phase === 'Failed' || phase === 'Abandoned' || phase === 'Unknown') return 'phase phase-bad';
  if (phase === 'Cancelled' || phase === 'Cancelling') return 'phase phase-off';
  if (phase === 'Running' || phase === 'Releasing') return 'phase phase-run';
  if (phase === 'SubmitUnknown' || phase === 'Retrying') return 'phase phase-warn';
  return 'phase phase-wait';
}

// Slurm's pending reasons that users meet most, in words (squeue(1), JOB REASON CODES).
const kSlurmReasons = {
  Priority: 'other jobs have a higher priority',
  Resources: 'waiting for free nodes',
  Dependency: 'waiting for a job it depends on',
  DependencyNeverSatisfied: 'a job it depends on failed; it will never start',
  BeginTime: 'its start time has not come',
  JobHeldUser: 'held by its user',
  JobHeldAdmin: 'held by an administrator',
  ReqNodeNotAvail: 'a node it needs is not available',
  PartitionDown: 'the partition is down',
  PartitionInactive: 'the partition is inactive',
  PartitionNodeLimit: 'it asks for more nodes than the partition allows',
  PartitionTimeLimit: 'its time limit is above the partition\'s',
  QOSMaxJobsPerUserLimit: 'you have as many jobs running as your QOS allows',
  AssocGrpGRES: 'your account\'s GPU limit is reached',
  BadConstraints: 'no node has the features it asks for',
  NodeDown: 'a node it needs is down',
  Reservation: 'waiting for its reservation',
  Licenses: 'waiting for licenses',
};

// A Slurm reason code alone ("Priority") or inside a sentence ("queued in Slurm (Priority)").
export function reasonInWords(reason) {
  if (!reason || reason === 'None') return '';
  if (kSlurmReasons[reason]) return `${kSlurmReasons[reason]} (${reason})`;
  return reason.replace(/\((\w+)\)/g, (all, code) => (kSlurmReasons[code] ? `(${kSlurmReasons[code]}: ${code})` : all));
}

// "12s", "4m", "3h", "2d" since an RFC 3339 time; "" when unset.
export function age(iso, now = Date.now()) {
  if (!iso) return '';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

// "in 12m" (or "3m ago") for an RFC 3339 time; "" when unset.
export function until(iso, now = Date.now()) {
  if (!iso) return '';
  const ms = Date.parse(iso) - now;
  if (Math.abs(ms) < 1000) return 'now';
  const span = age(new Date(now - Math.abs(ms)).toISOString(), now);
  return ms > 0 ? `in ${span}` : `${span} ago`;
}

// Why a job waits in Slurm's queue (the API's `waiting`), in one line for a list:
// "#2 of 7 in gpu · starts in 12m (Slurm's estimate)"; "" when it does not wait.
export function waitingLine(waiting, now = Date.now()) {
  const c = waiting && waiting.components && waiting.components[0];
  if (!c) return '';
  const parts = [];
  if (c.position) parts.push(`#${c.position} of ${c.pending_in_partition} in ${c.partition}`);
  parts.push(c.estimated_start ? `starts ${until(c.estimated_start, now)} (Slurm's estimate)` : 'no start estimate yet');
  return parts.join(' · ');
}

// "2026-12-03 12:01:02 UTC"; "—" when unset.
export function when(iso) {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

export function orDash(value) {
  return value === null || value === undefined || value === '' ? '—' : String(value);
}

export function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(1)} GiB`;
}
