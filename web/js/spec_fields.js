// Where an error's field (e.g. "spec.resources.pools[0].cpus") sits in a spec's text: the
// 0-based line of its key, else of the nearest ancestor found, else -1. Best effort over
// block-style YAML, which is what people write; for JSON it looks for the last key in
// quotes. Pure: text in, line number out.

function segmentsOf(field) {
  const out = [];
  for (const part of field.split('.')) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) break;
    if (m[1]) out.push({ key: m[1] });
    for (const idx of m[2].matchAll(/\[(\d+)\]/g)) out.push({ index: Number(idx[1]) });
  }
  return out;
}

// One line's shape: its indent, the column of a leading "- " (or -1), the column where its
// content starts, and the mapping key it opens (or null). Blank and comment lines: null.
function shapeOf(line) {
  if (/^\s*(#.*)?$/.test(line)) return null;
  const m = /^( *)(- +)?(.*)$/.exec(line);
  const indent = m[1].length;
  const key = /^(["']?)([^"'\s:#][^"':#]*?)\1\s*:(\s|$)/.exec(m[3]);
  return { indent, dash: m[2] ? indent : -1, col: indent + (m[2] ? m[2].length : 0), key: key ? key[2] : null };
}

export function lineOfField(text, field) {
  const lines = text.split('\n');
  const shapes = lines.map(shapeOf);
  const firstIn = (s, e) => { for (let i = s; i < e; i++) if (shapes[i]) return i; return -1; };
  let found = -1;
  let start = 0;
  let end = lines.length;
  for (const seg of segmentsOf(field)) {
    const first = firstIn(start, end);
    if (first === -1) break;
    let hit = -1;
    let next = end;
    if (seg.key !== undefined) {
      const keyCol = shapes[first].col;
      for (let i = first; i < end; i++) {
        const s = shapes[i];
        if (s && s.key === seg.key && s.col === keyCol && (i === first || s.dash === -1)) { hit = i; break; }
      }
      if (hit === -1) break;
      // Its value: the lines below, up to one indented less, or as much but not an item.
      for (let i = hit + 1; i < end; i++) {
        const s = shapes[i];
        if (s && (s.indent < keyCol || (s.indent === keyCol && s.dash === -1))) { next = i; break; }
      }
      start = hit + 1;
    } else {
      const dashCol = shapes[first].dash;
      if (dashCol === -1) break;
      const items = [];
      for (let i = first; i < end; i++) if (shapes[i] && shapes[i].dash === dashCol) items.push(i);
      if (seg.index >= items.length) break;
      hit = items[seg.index];
      next = seg.index + 1 < items.length ? items[seg.index + 1] : end;
      start = hit;  // the item's first key is on its own line
    }
    found = hit;
    end = next;
  }
  if (found === -1 && text.trimStart().startsWith('{')) {
    const last = segmentsOf(field).filter((s) => s.key !== undefined).at(-1);
    if (last) found = lines.findIndex((l) => l.includes(`"${last.key}"`));
  }
  return found;
}
