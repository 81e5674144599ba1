/**
 * The graph view: name scopes as groups that expand and collapse, groups of identical
 * structure marked alike and repeated ones folded into series, auxiliary nodes (gradients,
 * optimizer, init, save, summaries) in a side area with stubs on the nodes they touch, pan and
 * zoom, search, node details, and colouring by structure, device or compute time (from a
 * trace), every label at a contrast of at least 4.5:1. Layout runs in a web worker.
 */
import {
  BookkeepingRules,
  Graph,
  Group,
  GraphDef,
  VisibleGraph,
  VisibleItem,
  buildHierarchy,
  collapse,
  computeTimeOf,
  devicesBelow,
  extractBookkeeping,
  groupSeries,
  groupSignatures,
  normalizeRules,
  parseGraphDef,
  repeatedSignatures,
  groupsAround,
  searchOps
} from '../model/graph';
import { layoutGraph, layoutEngine } from '../layout';
import { LayoutResult } from '../model/layout';
import { textColorOn, tint } from '../model/color';
import { colorFor, heatColor, html, svg, title } from './dom';

/** "1 op", "3 ops". */
export const opCount = (n: number): string => `${n} op${n === 1 ? '' : 's'}`;

/** Fit never shrinks below this scale: a large graph is shown legibly from its top instead. */
const MIN_FIT_SCALE = 0.6;
/** Each view's arrow marker has its own id: with one shared id every panel's edges would point
 * at the first panel's marker, and draw no arrowheads while that panel is hidden. */
let markerCount = 0;

export type ColorMode = 'structure' | 'device' | 'compute';

/**
 * What a host (the Board panel, a notebook widget) hears about the user's actions, to keep its
 * own state in step: the expanded group paths, the selected op, the colour mode.
 */
export interface GraphViewHooks {
  expanded?(paths: string[]): void;
  selected?(name: string): void;
  colorMode?(mode: ColorMode): void;
}

export class GraphView {
  readonly node: HTMLElement;
  private readonly markerId: string;
  private graph: Graph | null = null;
  private groups = new Map<string, Group>();
  private signatures = new Map<string, string>();
  private repeated = new Map<string, number>();
  private expanded = new Set<string>();
  private rules: BookkeepingRules;
  private aside = new Set<string>();
  /** Auxiliary ops and scopes the user put back into the graph. */
  private keep = new Set<string>();
  private visible: VisibleGraph | null = null;
  private opTimes: Map<string, number> = new Map();
  private colorMode: ColorMode = 'structure';
  private selected: string | null = null;
  private transform = { x: 0, y: 0, k: 1 };
  private renderToken = 0;
  private svgEl: SVGSVGElement;
  private viewport: SVGGElement;
  private details: HTMLElement;
  private asideList: HTMLElement;
  private status: HTMLElement;
  private searchResults: HTMLElement;
  private colorSelect: HTMLSelectElement;
  private highlight = new Set<string>();
  private extraDetails = new Map<string, [string, string][]>();

  constructor(rules?: Partial<BookkeepingRules>, private hooks: GraphViewHooks = {}) {
    this.rules = normalizeRules(rules);
    this.node = html('div', { class: 'nbflow-graph' });
    const bar = html('div', { class: 'nbflow-toolbar' }, this.node);
    const search = html('input', { type: 'search', placeholder: 'Search ops…', class: 'nbflow-graph-search' }, bar);
    search.addEventListener('input', () => this.showSearch(search.value));
    html('label', {}, bar, 'Colour');
    this.colorSelect = html('select', { class: 'nbflow-graph-color' }, bar);
    for (const m of ['structure', 'device', 'compute']) {
      html('option', { value: m }, this.colorSelect, m);
    }
    this.colorSelect.addEventListener('change', () => {
      this.colorMode = this.colorSelect.value as ColorMode;
      this.hooks.colorMode?.(this.colorMode);
      void this.render();
    });
    html('label', { title: 'Ops with more edges than this are set aside; 0 keeps all' }, bar, 'Aside above degree');
    const degree = html('input', { type: 'number', min: '0', class: 'nbflow-graph-degree', value: String(this.rules.maxDegree) }, bar);
    degree.style.width = '4em';
    degree.addEventListener('change', () => this.setRules({ ...this.rules, maxDegree: Number(degree.value) || 0 }));
    const fit = html('button', { class: 'nbflow-button' }, bar, 'Fit');
    fit.addEventListener('click', () => this.fit());
    this.status = html('span', { class: 'nbflow-status nbflow-graph-status' }, bar);
    this.searchResults = html('div', { class: 'nbflow-search-results' }, this.node);
    const body = html('div', { class: 'nbflow-graph-body' }, this.node);
    this.svgEl = svg('svg', { class: 'nbflow-graph-canvas' });
    body.appendChild(this.svgEl);
    const defs = svg('defs', {}, this.svgEl);
    this.markerId = `nbflow-arrow-${++markerCount}`;
    const marker = svg('marker', { id: this.markerId, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' }, defs);
    svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'nbflow-arrow' }, marker);
    this.viewport = svg('g', { class: 'nbflow-viewport' }, this.svgEl);
    const side = html('div', { class: 'nbflow-graph-side' }, body);
    html('h4', {}, side, 'Details');
    this.details = html('div', { class: 'nbflow-graph-details' }, side, 'Click a node.');
    html('h4', {}, side, 'Auxiliary nodes');
    this.asideList = html('div', { class: 'nbflow-graph-aside' }, side);
    this.installPanZoom();
  }

  setGraphDef(def: GraphDef): void {
    this.graph = parseGraphDef(def);
    this.groups = buildHierarchy(this.graph);
    this.signatures = groupSignatures(this.graph, this.groups);
    groupSeries(this.graph, this.groups, this.signatures);
    this.signatures = groupSignatures(this.graph, this.groups);
    this.repeated = repeatedSignatures(this.groups, this.signatures);
    this.aside = extractBookkeeping(this.graph, this.rules, this.keep);
    for (const p of [...this.expanded]) {
      if (!this.groups.has(p)) {
        this.expanded.delete(p);
      }
    }
    void this.render(true);
  }

  setRules(rules: Partial<BookkeepingRules>): void {
    this.rules = normalizeRules(rules);
    if (this.graph) {
      this.aside = extractBookkeeping(this.graph, this.rules, this.keep);
      void this.render(true);
    }
  }

  /** Move an auxiliary entry (op or scope) into the graph, or a kept one back aside. */
  toggleAuxiliary(name: string): void {
    if (this.keep.has(name)) {
      this.keep.delete(name);
    } else {
      this.keep.add(name);
    }
    if (this.graph) {
      this.aside = extractBookkeeping(this.graph, this.rules, this.keep);
      void this.render(true);
    }
  }

  /** Per-op compute times (µs) from a trace, for colouring by compute time. */
  setOpTimes(times: Map<string, number>): void {
    this.opTimes = times;
    if (this.colorMode === 'compute') {
      void this.render();
    }
  }

  setColorMode(mode: ColorMode): void {
    this.colorMode = mode;
    this.colorSelect.value = mode;
    void this.render();
  }

  toggleGroup(path: string): void {
    if (this.expanded.has(path)) {
      this.expanded.delete(path);
    } else {
      this.expanded.add(path);
    }
    this.hooks.expanded?.([...this.expanded]);
    void this.render(true);
  }

  /** Expand exactly these groups (unknown paths are ignored); re-renders only on a change. */
  setExpanded(paths: Iterable<string>): void {
    const next = new Set([...paths].filter(p => this.groups.has(p) || !this.graph));
    if (next.size === this.expanded.size && [...next].every(p => this.expanded.has(p))) {
      return;
    }
    this.expanded = next;
    void this.render(true);
  }

  /** Mark these ops, and the collapsed groups holding them (e.g. the ops a notebook cell built). */
  setHighlight(names: Iterable<string>): void {
    this.highlight = new Set(names);
    void this.render();
  }

  /** Extra detail rows for an op (e.g. where it was created, its last value), shown when selected. */
  setExtraDetails(name: string, rows: [string, string][]): void {
    this.extraDetails.set(name, rows);
    if (this.selected === `op:${name}`) {
      this.showDetails();
    }
  }

  /** Expand the scopes around an op, select it and centre on it. */
  reveal(name: string): void {
    groupsAround(this.graph!, this.groups, name).forEach(s => this.expanded.add(s));
    this.selected = `op:${name}`;
    this.hooks.expanded?.([...this.expanded]);
    this.hooks.selected?.(name);
    void this.render(false).then(() => {
      this.showDetails();
      this.centerOn(`op:${name}`);
    });
  }

  /** Put an item in the middle of the view at a readable zoom. */
  centerOn(id: string): void {
    const box = this.lastLayout?.boxes[id];
    const rect = this.svgEl.getBoundingClientRect();
    if (!box || !rect.width) {
      return;
    }
    const k = Math.max(this.transform.k, 1);
    this.transform = { k, x: rect.width / 2 - box.x * k, y: rect.height / 2 - box.y * k };
    this.applyTransform();
  }

  private async render(relayout = false): Promise<void> {
    if (!this.graph) {
      return;
    }
    const token = ++this.renderToken;
    this.visible = collapse(this.graph, this.groups, this.expanded, this.aside);
    const v = this.visible;
    this.node.dataset.items = String(v.items.length);
    this.status.textContent = `${this.graph.ops.size} ops · ${v.items.length} shown · laying out…`;
    this.node.dataset.state = 'layout';
    const nodes = v.items.map(item => ({
      id: item.id,
      parent: item.parent,
      cluster: item.expanded,
      ...this.sizeOf(item)
    }));
    const result = await layoutGraph({ nodes, edges: v.edges.map(e => ({ src: e.src, dst: e.dst })) });
    if (token !== this.renderToken) {
      return;
    }
    this.draw(v, result);
    this.status.textContent = `${this.graph.ops.size} ops · ${v.items.length} shown · layout ${result.millis} ms (${layoutEngine})`;
    this.node.dataset.state = 'ready';
    this.node.dataset.layoutEngine = layoutEngine;
    if (relayout) {
      this.fit();
    }
    this.renderAside();
  }

  private sizeOf(item: VisibleItem): { width: number; height: number } {
    if (item.kind === 'op') {
      return { width: Math.max(50, item.label.length * 7 + 18), height: 26 };
    }
    return { width: Math.max(80, item.label.length * 7 + 60), height: 38 };
  }

  private fillOf(item: VisibleItem): string {
    if (this.colorMode === 'device') {
      const devices = devicesBelow(this.graph!, this.groups, item);
      return colorFor(devices[0] || '(unplaced)');
    }
    if (this.colorMode === 'compute') {
      const max = Math.max(1, ...this.visible!.items.map(i => computeTimeOf(this.groups, i, this.opTimes)));
      return heatColor(computeTimeOf(this.groups, item, this.opTimes) / max);
    }
    if (item.kind === 'group') {
      const sig = this.signatures.get(item.name)!;
      // one colour per repeated structure, distinct while there are fewer than the palette
      return this.repeated.has(sig) || this.groups.get(item.name)?.series
        ? tint(colorFor(sig, [...this.repeated.keys()].sort()), 0.6)
        : '#dbe5f5';
    }
    const op = this.graph!.ops.get(item.name)!.op;
    return /^(VariableV2|Variable|VarHandleOp)$/.test(op) ? '#f3e3c3' : '#ffffff';
  }

  private draw(v: VisibleGraph, layout: LayoutResult): void {
    this.viewport.textContent = '';
    const clusters = svg('g', { class: 'nbflow-clusters' }, this.viewport);
    const edgeLayer = svg('g', { class: 'nbflow-edges' }, this.viewport);
    const nodeLayer = svg('g', { class: 'nbflow-nodes' }, this.viewport);
    const byId = new Map(v.items.map(i => [i.id, i]));
    const depth = (item: VisibleItem): number => (item.parent ? depth(byId.get(item.parent)!) + 1 : 0);
    const ordered = v.items.filter(i => i.expanded).sort((a, b) => depth(a) - depth(b));
    for (const item of ordered) {
      const b = layout.boxes[item.id];
      const g = svg('g', { class: 'nbflow-cluster', 'data-name': item.name, 'data-id': item.id }, clusters);
      svg('rect', { x: b.x - b.width / 2, y: b.y - b.height / 2, width: b.width, height: b.height, rx: 6 }, g);
      const label = svg('text', { x: b.x - b.width / 2 + 8, y: b.y - b.height / 2 + 15, class: 'nbflow-cluster-label' }, g);
      label.textContent = `⊟ ${item.label}`;
      g.addEventListener('click', ev => {
        if ((ev.target as Element) === label) {
          this.toggleGroup(item.name);
        }
      });
    }
    const widthOf = (count: number): number => Math.min(6, 1 + Math.log2(count));
    for (const e of layout.edges) {
      const ve = v.edges.find(x => x.src === e.src && x.dst === e.dst);
      if (!e.points.length) {
        continue;
      }
      const d = 'M' + e.points.map(p => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join('L');
      const path = svg('path', {
        d,
        class: ve?.control ? 'nbflow-edge nbflow-edge-control' : 'nbflow-edge',
        'stroke-width': widthOf(ve?.count ?? 1),
        'marker-end': `url(#${this.markerId})`
      }, edgeLayer);
      if (ve && ve.count > 1) {
        title(path, `${ve.count} tensors`);
      }
    }
    for (const item of v.items) {
      if (item.expanded) {
        continue;
      }
      const b = layout.boxes[item.id];
      const cls = item.kind === 'group' ? 'nbflow-node nbflow-group' : 'nbflow-node nbflow-op';
      const marked = this.isHighlighted(item) ? ' nbflow-highlight' : '';
      const g = svg('g', {
        class: cls + marked + (this.selected === item.id ? ' nbflow-selected' : ''),
        'data-id': item.id,
        'data-name': item.name,
        transform: `translate(${b.x - b.width / 2},${b.y - b.height / 2})`
      }, nodeLayer);
      const fill = this.fillOf(item);
      const ink = textColorOn(fill);
      const series = item.kind === 'group' ? this.groups.get(item.name)!.series : undefined;
      if (series) {  // a stack of cards: one node standing for many alike
        svg('rect', { x: 4, y: -4, width: b.width, height: b.height, rx: 8, fill, class: 'nbflow-series-back' }, g);
      }
      svg('rect', { width: b.width, height: b.height, rx: item.kind === 'group' ? 8 : 13, fill }, g);
      const text = svg('text', { x: b.width / 2, y: item.kind === 'group' ? 15 : 17, 'text-anchor': 'middle', fill: ink }, g);
      text.textContent = item.kind === 'group' ? `⊞ ${item.label}` : item.label;
      this.drawStubs(g, item, b.width, b.height);
      if (item.kind === 'group') {
        const group = this.groups.get(item.name)!;
        const sig = this.signatures.get(item.name)!;
        const rep = this.repeated.get(sig);
        const sub = svg('text', { x: b.width / 2, y: 31, 'text-anchor': 'middle', class: 'nbflow-sub', fill: ink }, g);
        sub.textContent = series
          ? `${series} alike · ${opCount(group.size)}`
          : opCount(group.size) + (rep ? ` · ×${rep} alike` : '');
        if (series) {
          g.classList.add('nbflow-series');
          g.setAttribute('data-series', String(series));
        }
        if (rep) {
          g.classList.add('nbflow-repeated');
          g.setAttribute('data-signature', sig);
        }
      }
      title(g, item.kind === 'group' ? `${item.name} (click to expand)` : `${item.name} (${this.graph!.ops.get(item.name)!.op})`);
      g.addEventListener('click', ev => {
        ev.stopPropagation();
        this.selected = item.id;
        this.showDetails();
        this.viewport.querySelectorAll('.nbflow-selected').forEach(n => n.classList.remove('nbflow-selected'));
        g.classList.add('nbflow-selected');
        if (item.kind === 'op') {
          this.hooks.selected?.(item.name);
        }
      });
      g.addEventListener('dblclick', ev => {
        ev.stopPropagation();
        if (item.kind === 'group') {
          this.toggleGroup(item.name);
        }
      });
      if (item.kind === 'group') {
        text.addEventListener('click', ev => {
          ev.stopPropagation();
          this.selected = item.id;
          this.toggleGroup(item.name);
        });
      }
    }
    this.lastLayout = layout;
    this.applyTransform();
  }

  private lastLayout: LayoutResult | null = null;

  /** Short marks for edges to the auxiliary area: inputs on top, outputs below. */
  private drawStubs(g: SVGGElement, item: VisibleItem, width: number, height: number): void {
    const stubs = this.visible?.stubs.get(item.id);
    if (!stubs) {
      return;
    }
    const mark = (names: string[], y0: number, y1: number, side: string): void => {
      names.slice(0, 4).forEach((name, i) => {
        const x = width - 10 - i * 7;
        const stub = svg('g', { class: `nbflow-stub nbflow-stub-${side}`, 'data-aux': name }, g);
        svg('line', { x1: x, y1: y0, x2: x, y2: y1 }, stub);
        svg('circle', { cx: x, cy: y0 < y1 ? y0 : y1, r: 2.2 }, stub);
        title(stub, `${side === 'in' ? 'input from' : 'output to'} auxiliary ${name}`);
      });
    };
    mark(stubs.in, -9, 0, 'in');
    mark(stubs.out, height, height + 9, 'out');
  }

  private isHighlighted(item: VisibleItem): boolean {
    if (!this.highlight.size) {
      return false;
    }
    if (item.kind === 'op') {
      return this.highlight.has(item.name);
    }
    const prefix = item.name + '/';
    for (const name of this.highlight) {
      const op = this.graph!.ops.get(name);
      if (op && (op.group === item.name || op.group.startsWith(prefix))) {
        return true;
      }
    }
    return false;
  }

  private showDetails(): void {
    const graph = this.graph;
    if (!graph || !this.selected) {
      return;
    }
    const d = this.details;
    d.textContent = '';
    const row = (k: string, v: string): void => {
      const r = html('div', { class: 'nbflow-kv' }, d);
      html('b', {}, r, k + ' ');
      html('span', {}, r, v);
    };
    if (this.selected.startsWith('group:')) {
      const path = this.selected.slice(6);
      const g = this.groups.get(path);
      if (!g) {
        return;
      }
      row(g.series ? 'series' : 'group', path);
      if (g.series) {
        row('members', `${g.series} groups of one structure`);
      }
      row('ops below', String(g.size));
      row('devices', devicesBelow(graph, this.groups, { id: this.selected, kind: 'group', name: path, label: '', parent: '', expanded: false }).join(', ') || '(unplaced)');
      const time = computeTimeOf(this.groups, { id: this.selected, kind: 'group', name: path, label: '', parent: '', expanded: false }, this.opTimes);
      if (time) {
        row('compute', `${time.toFixed(0)} µs`);
      }
      const rep = this.repeated.get(this.signatures.get(path)!);
      if (rep) {
        row('structure', `identical to ${rep - 1} other group(s)`);
      }
      return;
    }
    const name = this.selected.slice(3);
    const op = graph.ops.get(name);
    if (!op) {
      return;
    }
    row('name', op.name);
    row('op', op.op);
    row('device', op.device || '(unplaced)');
    row('inputs', op.inputs.join(', ') || '—');
    const shapes = op.attr['_output_shapes'];
    if (shapes !== undefined) {
      row('shape', JSON.stringify(shapes));
    }
    const time = this.opTimes.get(op.name);
    if (time) {
      row('compute', `${time.toFixed(0)} µs`);
    }
    for (const [k, v] of Object.entries(op.attr)) {
      if (k !== '_output_shapes') {
        row(k, JSON.stringify(v).slice(0, 200));
      }
    }
    for (const [k, v] of this.extraDetails.get(name) ?? []) {
      row(k, v);
    }
  }

  private showSearch(query: string): void {
    this.searchResults.textContent = '';
    if (!this.graph) {
      return;
    }
    for (const op of searchOps(this.graph, query, 20)) {
      const r = html('div', { class: 'nbflow-search-result' }, this.searchResults, `${op.name} (${op.op})`);
      r.addEventListener('click', () => {
        this.searchResults.textContent = '';
        this.reveal(op.name);
      });
    }
  }

  private renderAside(): void {
    this.asideList.textContent = '';
    const list = this.visible?.aside ?? [];
    if (!list.length) {
      this.asideList.textContent = 'none';
    }
    for (const a of list) {
      const r = html('div', { class: 'nbflow-aside-item', 'data-name': a.name }, this.asideList);
      html('span', { class: 'nbflow-aside-name' }, r, a.op === 'group' ? `⊞ ${a.name}` : a.name);
      html('span', { class: 'nbflow-sub' }, r, ` ${a.op === 'group' ? opCount(a.ops) : a.op} · ${a.degree} edge${a.degree === 1 ? '' : 's'}`);
      const back = html('button', { class: 'nbflow-aside-toggle', title: 'Show it in the graph' }, r, '↩');
      back.addEventListener('click', ev => {
        ev.stopPropagation();
        this.toggleAuxiliary(a.name);
      });
      r.addEventListener('click', () => {
        if (this.graph?.ops.has(a.name)) {
          this.selected = `op:${a.name}`;
          this.showDetails();
          this.hooks.selected?.(a.name);
        }
      });
    }
    for (const name of [...this.keep].sort()) {
      const r = html('div', { class: 'nbflow-aside-item nbflow-aside-kept', 'data-name': name }, this.asideList);
      html('span', { class: 'nbflow-sub' }, r, `${name} (in the graph) `);
      const away = html('button', { class: 'nbflow-aside-toggle', title: 'Set it aside again' }, r, '⇥');
      away.addEventListener('click', () => this.toggleAuxiliary(name));
    }
  }

  private installPanZoom(): void {
    let drag: { x: number; y: number } | null = null;
    this.svgEl.addEventListener('pointerdown', ev => {
      drag = { x: ev.clientX, y: ev.clientY };
    });
    this.svgEl.addEventListener('pointermove', ev => {
      if (drag && ev.buttons) {
        this.transform.x += ev.clientX - drag.x;
        this.transform.y += ev.clientY - drag.y;
        drag = { x: ev.clientX, y: ev.clientY };
        this.applyTransform();
      }
    });
    this.svgEl.addEventListener('pointerup', () => (drag = null));
    this.svgEl.addEventListener('wheel', ev => {
      ev.preventDefault();
      const rect = this.svgEl.getBoundingClientRect();
      const px = ev.clientX - rect.left;
      const py = ev.clientY - rect.top;
      const factor = Math.exp(-ev.deltaY * 0.0015);
      const k = Math.max(0.02, Math.min(8, this.transform.k * factor));
      const f = k / this.transform.k;
      this.transform = { x: px - (px - this.transform.x) * f, y: py - (py - this.transform.y) * f, k };
      this.applyTransform();
    }, { passive: false });
  }

  /** Scale and centre the whole graph into the view. */
  fit(): void {
    const layout = this.lastLayout;
    const rect = this.svgEl.getBoundingClientRect();
    if (!layout || !rect.width || !rect.height) {
      return;
    }
    const whole = Math.min(1.5, rect.width / (layout.width + 20), rect.height / (layout.height + 20));
    const k = Math.max(MIN_FIT_SCALE, whole);
    // too big to show whole at a legible size: centre it across, start from its top
    const x = (rect.width - layout.width * k) / 2;
    const y = whole < MIN_FIT_SCALE ? 10 : Math.max(0, (rect.height - layout.height * k) / 2);
    this.transform = { k, x, y };
    this.applyTransform();
  }

  private applyTransform(): void {
    const t = this.transform;
    this.viewport.setAttribute('transform', `translate(${t.x},${t.y}) scale(${t.k})`);
  }
}
