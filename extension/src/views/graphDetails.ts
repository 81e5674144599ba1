/**
 * The graph view's details panel: what one selected node is. For an op: its type, device,
 * inputs, each output's dtype and shape, compute time and memory from a traced step, where it
 * was created (a link that opens the notebook cell, where the host can), what the last re-run
 * did to it, its attributes and any rows the host adds (e.g. its last values). For a group or a
 * series: its ops, devices, compute time and how many groups share its structure.
 *
 * A function of the model and the selection only: the view (graphView.ts) calls it again
 * whenever either changes, and it redraws the panel from scratch.
 */
import { computeTimeOf, devicesBelow, Group } from '../model/graph';
import { formatTensor, Graph, outputsOf, parseSource, SourceSite } from '../model/graphDef';
import { html } from './dom';

/** What the panel reads: the view's model and per-op figures. */
export interface DetailsContext {
  graph: Graph;
  groups: Map<string, Group>;
  /** Each group's structural signature, and how many groups share each signature. */
  signatures: ReadonlyMap<string, string>;
  repeated: ReadonlyMap<string, number>;
  /** Per-op compute time (µs) and output bytes from a traced step. */
  opTimes: ReadonlyMap<string, number>;
  opBytes: ReadonlyMap<string, number>;
  /** Rows a host adds per op name. */
  extraDetails: ReadonlyMap<string, [string, string][]>;
  /** What the last re-run did to an op ("added", "changed"), if anything. */
  diffStatus(name: string): string | undefined;
  /** Open the notebook cell that created an op; absent: the site is shown as text. */
  openCell?(cell: string, line: number): unknown;
}

/** Fill `node` with the details of the selected item (`group:<path>` or `op:<name>`). */
export function renderDetails(node: HTMLElement, selected: string, ctx: DetailsContext): void {
  const { graph } = ctx;
  node.textContent = '';
  const row = (k: string, v: string): void => {
    const r = html('div', { class: 'nbflow-kv' }, node);
    html('b', {}, r, k + ' ');
    html('span', {}, r, v);
  };
  if (selected.startsWith('group:')) {
    const path = selected.slice(6);
    const g = ctx.groups.get(path);
    if (!g) {
      return;
    }
    const item = { id: selected, kind: 'group' as const, name: path, label: '', parent: '', expanded: false };
    row(g.series ? 'series' : 'group', path);
    if (g.series) {
      row('members', `${g.series} groups of one structure`);
    }
    row('ops below', String(g.size));
    row('devices', devicesBelow(graph, ctx.groups, item).join(', ') || '(unplaced)');
    const time = computeTimeOf(ctx.groups, item, ctx.opTimes);
    if (time) {
      row('compute', `${time.toFixed(0)} µs`);
    }
    const rep = ctx.repeated.get(ctx.signatures.get(path)!);
    if (rep) {
      row('structure', `identical to ${rep - 1} other group(s)`);
    }
    return;
  }
  const name = selected.slice(3);
  const op = graph.ops.get(name);
  if (!op) {
    return;
  }
  row('name', op.name);
  row('op', op.op);
  row('device', op.device || '(unplaced)');
  row('inputs', op.inputs.join(', ') || '—');
  outputsOf(op).forEach((t, i) => row(`output ${i}`, formatTensor(t)));
  const time = ctx.opTimes.get(op.name);
  if (time) {
    row('compute', `${time.toFixed(0)} µs`);
  }
  const bytes = ctx.opBytes.get(op.name);
  if (bytes) {
    row('memory', formatBytes(bytes));
  }
  const site = parseSource(op.attr['_source']);
  if (site) {
    showSource(node, site, ctx.openCell);
  }
  const status = ctx.diffStatus(name);
  if (status) {
    row('last re-run', status);
  }
  for (const [k, v] of Object.entries(op.attr)) {
    if (!INTERNAL_ATTRS.has(k)) {
      row(k, formatAttr(v));
    }
  }
  for (const [k, v] of ctx.extraDetails.get(name) ?? []) {
    row(k, v);
  }
}

/** "created at: cell [3], line 2" (a link into the notebook where a host can open cells). */
function showSource(d: HTMLElement, site: SourceSite, openCell: DetailsContext['openCell']): void {
  const r = html('div', { class: 'nbflow-kv nbflow-source' }, d);
  html('b', {}, r, 'created at ');
  if (site.cell !== undefined) {
    const text = `cell ${site.executionCount !== undefined ? `[${site.executionCount}]` : site.cell}, line ${site.line}`;
    if (openCell && site.cell) {
      const a = html('a', { href: '#', class: 'nbflow-cell-link', 'data-cell': site.cell, 'data-line': String(site.line) }, r, text);
      a.addEventListener('click', ev => {
        ev.preventDefault();
        openCell(site.cell!, site.line);
      });
    } else {
      html('span', {}, r, text);
    }
  } else {
    html('span', {}, r, `${site.file}:${site.line}`);
  }
}

/** Attrs the details show in their own rows (or not at all). */
const INTERNAL_ATTRS = new Set(['_output_shapes', '_output_types', '_source']);

/** An attr value as a short text: "float32", "[5,5,1,16]", "true", a list, a tensor summary. */
function formatAttr(v: unknown): string {
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o.type === 'string') {
      return o.type;
    }
    if ('shape' in o) {
      return formatTensor({ dtype: '', shape: o.shape as (number | null)[] | null }).slice(1);
    }
    if (Array.isArray(o.list)) {
      return '[' + o.list.map(formatAttr).join(', ') + ']';
    }
  }
  return JSON.stringify(v).slice(0, 200);
}

/** "512 B", "3.1 KB", "24.0 MB". */
export function formatBytes(n: number): string {
  if (n < 1024) {
    return `${Math.round(n)} B`;
  }
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}
