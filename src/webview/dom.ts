/**
 * The webview's only way to build DOM: elements with text children and a vetted set of attributes.
 * Text always goes in as text nodes (never HTML), and attributes that could load or run something
 * (`on*`, `href`, `src`, `style`, ...) are refused, so fixture text cannot become markup or a URL
 * however it is routed through the renderer.
 */

export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | undefined>;

/** Attributes that load resources, run script, or bypass the CSSOM (blocked by the CSP anyway). */
const FORBIDDEN_ATTR = /^(on|formaction$|href$|src$|srcset$|srcdoc$|style$|action$|xlink:|data$|poster$|background$)/i;

export function setAttrs(node: Element, attrs: Attrs): void {
  for (const [name, value] of Object.entries(attrs)) {
    if (FORBIDDEN_ATTR.test(name)) throw new Error(`refusing attribute ${name}`);
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : String(value));
  }
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** `el('td', { class: 'num' }, '42')`: an element with a class, vetted attributes and text/element children. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { class?: string; attrs?: Attrs } | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props?.class) node.className = props.class;
  if (props?.attrs) setAttrs(node, props.attrs);
  append(node, children);
  return node;
}

/** A `<button type="button">` with an accessible label when its text alone is not enough. */
export function button(text: string, onClick: (ev: MouseEvent) => void, props: { class?: string; label?: string; attrs?: Attrs } = {}): HTMLButtonElement {
  const b = el('button', { class: props.class, attrs: { type: 'button', 'aria-label': props.label, ...props.attrs } }, text);
  b.addEventListener('click', onClick);
  return b;
}

/** Text only a screen reader announces (the visual equivalent is shown another way). */
export function srOnly(text: string): HTMLSpanElement {
  return el('span', { class: 'sr-only' }, text);
}
