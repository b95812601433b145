// The submit page (/ui/submit.html): paste or upload a spec (YAML or JSON); it is validated
// against the server as you type (POST /v1/validate, nothing stored) and every error is
// shown at its field — beside the spec line that holds it — then submitted (POST /v1/jobs),
// which opens the new job's page.
import { api, ApiError } from './api.js';
import { fill, h } from './dom.js';
import { lineOfField } from './spec_fields.js';
import { errorList, startPage } from './shell.js';

const kValidateDelayMs = 400;
const kContentType = 'application/yaml';

const kExample = `apiVersion: tuneplane.io/v1
kind: TrainingJob
metadata:
  name: hello
  labels:
    team: nlp
spec:
  framework:
    name: custom
    task: custom
    runtime_id: custom-demo
    command: ["python3", "-c", "print('hello')"]
  resources:
    time_limit: 10m
    pools:
      - name: main
        nodes: 1
        gpus_per_node: 0
        cpus: 2
        memory_gb: 1
`;

// The spec, line by line, with each error placed under the line of its field; errors whose
// field is not in the text (or has none) are listed above the first line.
function annotated(text, errors) {
  const at = new Map();
  const general = [];
  for (const e of errors) {
    const line = e.field ? lineOfField(text, e.field) : -1;
    if (line === -1) general.push(e);
    else at.set(line, [...(at.get(line) || []), e]);
  }
  const marker = (e) => h('li', { class: 'field-error', dataset: { field: e.field } },
    h('code', { class: 'field' }, e.field), ' ', h('span', { class: 'message' }, e.message), ' ', h('span', { class: 'code' }, e.code));
  return h('ol', { id: 'spec-lines', class: 'spec-lines' },
    general.length ? h('li', { class: 'line general' }, h('ul', { class: 'field-errors' }, general.map(marker))) : null,
    text.split('\n').map((line, i) => h('li', { class: at.has(i) ? 'line has-error' : 'line', dataset: { line: String(i + 1) } },
      h('span', { class: 'ln' }, String(i + 1)), h('span', { class: 'src' }, line || ' '),
      at.has(i) ? h('ul', { class: 'field-errors' }, at.get(i).map(marker)) : null)));
}

function summary(v) {
  return h('div', { id: 'valid-summary' },
    h('p', {}, h('span', { class: 'phase phase-ok' }, 'Valid'), ' ', h('strong', {}, v.job_name),
      ` · ${v.framework} · ${v.container_runtime} · time limit ${v.time_limit.minutes === null ? 'the partition default' : `${v.time_limit.minutes} min`}`),
    h('table', { class: 'table' },
      h('thead', {}, h('tr', {}, ['Pool', 'Partition', 'Constraint', 'Nodes', 'GPUs/node', 'CPUs/node', 'Memory'].map((c) => h('th', {}, c)))),
      h('tbody', {}, v.components.map((c) => h('tr', {},
        h('td', {}, c.pool), h('td', {}, c.partition), h('td', {}, c.constraint || '—'), h('td', { class: 'num' }, String(c.nodes)),
        h('td', { class: 'num' }, String(c.gpus_per_node)), h('td', { class: 'num' }, String(c.cpus_per_node)),
        h('td', { class: 'num' }, `${c.memory_mb} MB`))))));
}

startPage('submit', (who, main) => {
  const text = h('textarea', { id: 'spec-text', spellcheck: 'false', rows: '22', placeholder: 'Paste a job spec (YAML or JSON)…' });
  const file = h('input', { id: 'spec-file', type: 'file', accept: '.yaml,.yml,.json,text/yaml,application/json' });
  const submit = h('button', { id: 'submit', type: 'button', disabled: true }, 'Submit');
  const example = h('button', { id: 'example', type: 'button', class: 'quiet' }, 'Start from an example');
  const state = h('p', { id: 'validation-state', class: 'status' }, 'Paste or upload a spec.');
  const result = h('div', { id: 'validation' });
  fill(main,
    h('h1', {}, 'Submit a job'),
    h('div', { class: 'two' },
      h('section', { class: 'card' },
        h('div', { class: 'filters' }, h('label', {}, 'Upload ', file), example),
        text,
        h('div', { class: 'actions' }, submit, state)),
      h('section', { class: 'card' }, h('h2', {}, 'Validation'), result)));

  let sequence = 0;
  let timer = null;
  const show = (errors) => fill(result, h('p', { class: 'error' }, `${errors.length} problem${errors.length === 1 ? '' : 's'} — each at its field:`),
    errorList(errors, 'errors'), annotated(text.value, errors));
  const validate = async () => {
    const mine = ++sequence;
    if (!text.value.trim()) {
      submit.disabled = true;
      fill(state, 'Paste or upload a spec.');
      return fill(result);
    }
    fill(state, 'Validating…');
    try {
      const v = await api('POST', '/v1/validate', { body: text.value, contentType: kContentType });
      if (mine !== sequence) return;
      fill(state, 'Valid: ready to submit.');
      fill(result, summary(v));
      submit.disabled = false;
    } catch (e) {
      if (mine !== sequence) return;
      submit.disabled = true;
      fill(state, e.status === 422 ? 'Refused: fix the problems shown.' : `Could not validate: ${e.message}`);
      show(e.errors || []);
    }
  };
  const later = () => {
    submit.disabled = true;
    clearTimeout(timer);
    timer = setTimeout(validate, kValidateDelayMs);
  };
  text.addEventListener('input', later);
  file.addEventListener('change', async () => {
    if (!file.files.length) return;
    text.value = await file.files[0].text();
    validate();
  });
  example.addEventListener('click', () => { text.value = kExample; validate(); });
  submit.addEventListener('click', async () => {
    submit.disabled = true;
    fill(state, 'Submitting…');
    try {
      const job = await api('POST', '/v1/jobs', { body: text.value, contentType: kContentType });
      window.location.assign(`/ui/job.html?id=${encodeURIComponent(job.id)}`);
    } catch (e) {
      fill(state, e instanceof ApiError && e.status === 422 ? 'Refused: fix the problems shown.' : `Not submitted: ${e.message}`);
      show(e.errors || []);
    }
  });
});
