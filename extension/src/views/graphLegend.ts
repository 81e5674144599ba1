/**
 * The graph view's legend: what the node shapes, the edge styles and the current colours mean.
 * Its swatches are drawn with the same classes as the graph, so the legend cannot drift from it.
 */
import { html, svg } from './dom';

export type ColorMode = 'structure' | 'device' | 'compute' | 'memory';

export interface LegendScheme {
  mode: ColorMode;
  /** Device colouring: each device and its fill. */
  devices?: [string, string][];
  /** Compute or memory colouring: the fills for 0 and for the largest value, and that value. */
  scale?: { low: string; high: string; max: string };
  /** Why a colouring is not offered (e.g. the trace carries no allocation figures). */
  notes?: string[];
}

function swatch(parent: HTMLElement, draw: (g: SVGSVGElement) => void): void {
  const s = svg('svg', { width: 34, height: 16, class: 'nbflow-legend-swatch' }, parent);
  draw(s);
}

function entry(list: HTMLElement, kind: string, text: string, draw: (g: SVGSVGElement) => void): void {
  const row = html('div', { class: 'nbflow-legend-row', 'data-kind': kind }, list);
  swatch(row, draw);
  html('span', {}, row, text);
}

/** Fill `node` with the legend for `scheme`. */
export function renderLegend(node: HTMLElement, scheme: LegendScheme, markerId: string): void {
  node.textContent = '';
  const nodes = html('div', { class: 'nbflow-legend-section' }, node);
  const nodeShape = (cls: string, rx: number, fill: string, back = false) => (s: SVGSVGElement) => {
    const g = svg('g', { class: cls }, s);
    if (back) {
      svg('rect', { x: 5, y: 1, width: 26, height: 12, rx, fill, class: 'nbflow-series-back' }, g);
    }
    svg('rect', { x: 2, y: 3, width: 26, height: 12, rx, fill }, g);
  };
  // swatches take the graph's look from nbflow-legend-node, not nbflow-node: they are no nodes
  entry(nodes, 'op', 'operation', nodeShape('nbflow-legend-node', 6, '#ffffff'));
  entry(nodes, 'variable', 'variable', nodeShape('nbflow-legend-node', 6, '#f3e3c3'));
  entry(nodes, 'group', 'name scope (⊞ expands)', nodeShape('nbflow-legend-node', 3, '#dbe5f5'));
  entry(nodes, 'repeated', 'scope repeated elsewhere', nodeShape('nbflow-legend-node nbflow-repeated', 3, '#dbe5f5'));
  entry(nodes, 'series', 'series of alike scopes', nodeShape('nbflow-legend-node', 3, '#dbe5f5', true));
  entry(nodes, 'stub', 'edge to an auxiliary node', s => {
    const g = svg('g', { class: 'nbflow-legend-stub' }, s);
    svg('line', { x1: 17, y1: 2, x2: 17, y2: 13 }, g);
    svg('circle', { cx: 17, cy: 13, r: 2.2 }, g);
  });
  entry(nodes, 'diff', 'added / changed by the last re-run', s => {
    svg('rect', { x: 1, y: 2, width: 14, height: 12, rx: 3, fill: '#ffffff', class: 'nbflow-diff-swatch-added' }, s);
    svg('rect', { x: 19, y: 2, width: 14, height: 12, rx: 3, fill: '#ffffff', class: 'nbflow-diff-swatch-changed' }, s);
  });
  const edges = html('div', { class: 'nbflow-legend-section' }, node);
  const edge = (cls: string, width: number, marker = markerId) => (s: SVGSVGElement) =>
    svg('path', { d: 'M2,8L28,8', class: cls, 'stroke-width': width, 'marker-end': `url(#${marker})` }, s);
  entry(edges, 'data', 'data (width: tensor size)', edge('nbflow-edge nbflow-edge-data', 2));
  entry(edges, 'control', 'control dependency', edge('nbflow-edge nbflow-edge-control', 1));
  entry(edges, 'ref', 'reference: variable update', edge('nbflow-edge nbflow-edge-ref', 2, `${markerId}-ref`));
  const colors = html('div', { class: 'nbflow-legend-section nbflow-legend-colors', 'data-mode': scheme.mode }, node);
  if (scheme.mode === 'structure') {
    html('div', {}, colors, 'Colour: one colour per repeated structure; light blue: a unique scope.');
  } else if (scheme.mode === 'device') {
    html('div', {}, colors, 'Colour: device');
    for (const [device, fill] of scheme.devices ?? []) {
      entry(colors, 'device', device, s => svg('rect', { x: 2, y: 2, width: 26, height: 12, rx: 3, fill, stroke: '#5b6b8c' }, s));
    }
  } else {
    html('div', {}, colors, scheme.mode === 'compute' ? 'Colour: compute time (traced step)' : 'Colour: bytes allocated (traced step)');
    const bar = html('div', { class: 'nbflow-legend-scale' }, colors);
    bar.style.background = `linear-gradient(to right, ${scheme.scale?.low ?? '#fff'}, ${scheme.scale?.high ?? '#000'})`;
    const ends = html('div', { class: 'nbflow-legend-ends' }, colors);
    html('span', {}, ends, '0');
    html('span', {}, ends, scheme.scale?.max ?? '');
  }
  for (const note of scheme.notes ?? []) {
    html('div', { class: 'nbflow-legend-note' }, colors, note);
  }
}
