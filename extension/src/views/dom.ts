/** Small DOM helpers shared by the board's views (no framework: the views stay portable). */

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {},
  parent?: Element
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    el.setAttribute(k, String(v));
  }
  parent?.appendChild(el);
  return el;
}

export function html<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  parent?: Element,
  text?: string
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') {
      el.className = v;
    } else {
      el.setAttribute(k, v);
    }
  }
  if (text !== undefined) {
    el.textContent = text;
  }
  parent?.appendChild(el);
  return el;
}

export function title(el: Element, text: string): void {
  svg('title', {}, el).textContent = text;
}

const PALETTE = [
  '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd',
  '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'
];

/** A stable colour per key (run, device, op type). */
export function colorFor(key: string, keys?: string[]): string {
  if (keys) {
    const i = keys.indexOf(key);
    if (i >= 0) {
      return PALETTE[i % PALETTE.length];
    }
  }
  let h = 0;
  for (let i = 0; i < key.length; i++) {
    h = (Math.imul(h, 31) + key.charCodeAt(i)) >>> 0;
  }
  return PALETTE[h % PALETTE.length];
}

/** White (0) to dark red (1), for compute-time colouring. */
export function heatColor(f: number): string {
  const t = Math.max(0, Math.min(1, f));
  const r = Math.round(255 - 80 * t);
  const g = Math.round(245 - 200 * t);
  const b = Math.round(235 - 200 * t);
  return `rgb(${r},${g},${b})`;
}

export function formatNumber(v: number): string {
  if (v === 0) {
    return '0';
  }
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) {
    return v.toExponential(2);
  }
  return Number(v.toPrecision(4)).toString();
}

/** A chart's title: its tag and run, or the tag alone for the logdir's own run ("."). */
export function chartTitle(tag: string, run: string): string {
  return run === '.' || run === '' ? tag : `${tag} · ${run}`;
}
