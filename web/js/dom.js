// Building the page without markup: every value is a text node, never HTML. No function
// here takes HTML; there is no innerHTML anywhere in the console (the CSP would not let an
// injected script run anyway, but nothing is injected to begin with).

// h('td', {class: 'phase', title: 'x', dataset: {id: '1'}, on: {click: fn}}, 'text', node, …)
// Strings and numbers become text nodes; null/undefined/false children are skipped; arrays
// are flattened.
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'on') for (const [event, fn] of Object.entries(value)) node.addEventListener(event, fn);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'hidden' || key === 'disabled' || key === 'checked' || key === 'selected') node[key] = Boolean(value);
    else if (key === 'value') node.value = value;
    else if (/^on/i.test(key)) throw new Error(`h(): event handler attributes are not allowed (${key})`);
    else node.setAttribute(key, String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// Replaces every child of `node` with `children` (text or nodes).
export function fill(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

export function byId(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`no element #${id}`);
  return node;
}
