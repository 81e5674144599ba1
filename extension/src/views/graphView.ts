/**
 * The graph view: name scopes as groups that expand and collapse, groups of identical
 * structure marked alike and repeated ones folded into series, auxiliary nodes (gradients,
 * optimizer, init, save, summaries) in a side area with stubs on the nodes they touch, pan and
 * zoom, search, node details, and colouring by structure, device, compute time or memory (from
 * a trace), every label at a contrast of at least 4.5:1. Edges are drawn by kind (data solid
 * and as wide as their tensors, control dashed, variable updates in orange) and show their
 * tensors' dtypes and shapes on hover. A legend, a minimap and SVG/PNG export sit beside the
 * graph; after a re-run, the ops it added or changed are marked (the graph diff).
 *
 * Beside this file: the details panel (graphDetails.ts), pan and zoom (panZoom.ts), the legend
 * (graphLegend.ts), the minimap (minimap.ts) and SVG/PNG export (svgExport.ts).
 * Layout runs in a web worker. The view leaves performance marks for the browser tests:
 * `nbflow-graph-first-paint` (graph data given to the view -> drawn) and `nbflow-graph-expand`
 * (a group clicked -> the expanded graph drawn).
 */
import { BookkeepingRules, extractBookkeeping, normalizeRules } from '../model/auxiliary';
import {
  buildHierarchy,
  collapse,
  computeTimeOf,
  devicesBelow,
  edgeElements,
  edgeLabel,
  Group,
  groupsAround,
  opId,
  searchOps,
  VisibleGraph,
  VisibleItem
} from '../model/graph';
import { diffGraphs, Graph, GraphDef, GraphDiff, parseGraphDef, strokeWidthFor } from '../model/graphDef';
import { groupSeries, groupSignatures, repeatedSignatures } from '../model/graphSeries';
import { layoutGraph, layoutEngine } from '../layout';
import { LayoutResult } from '../model/layout';
import { textColorOn, tint } from '../model/color';
import { colorFor, formatNumber, heatColor, html, svg, title } from './dom';
import { formatBytes, renderDetails } from './graphDetails';
import { ColorMode, LegendScheme, renderLegend } from './graphLegend';
import { Minimap } from './minimap';
import { PanZoom } from './panZoom';
import { download, standaloneSvg, svgToPng } from './svgExport';

export type { ColorMode } from './graphLegend';

/** "1 op", "3 ops". */
export const opCount = (n: number): string => `${n} op${n === 1 ? '' : 's'}`;

/** Each view's arrow marker has its own id: with one shared id every panel's edges would point
 * at the first panel's marker, and draw no arrowheads while that panel is hidden. */
let markerCount = 0;


/**
 * What a host (the Board panel, a notebook widget) hears about the user's actions, to keep its
 * own state in step: the expanded group paths, the selected op, the colour mode.
 */
export interface GraphViewHooks {
  expanded?(paths: string[]): void;
  selected?(name: string): void;
  colorMode?(mode: ColorMode): void;
  /** Open the notebook cell that created an op (its `_source` names the cell); absent: no link. */
  openCell?(cell: string, line: number): boolean | void;
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
  private opBytes: Map<string, number> = new Map();
  /** Why memory colouring is not offered, once a trace without allocation figures arrived. */
  private memoryNote = '';
  private diff: GraphDiff | null = null;
  /** Diff status of drawn groups: "added" (all ops below new) or "changed". */
  private diffGroups = new Map<string, 'added' | 'changed'>();
  private diffAdded = new Set<string>();
  private diffChanged = new Set<string>();
  private changesEl: HTMLElement;
  private legendEl: HTMLElement;
  private minimap: Minimap;
  private edgeTip: HTMLElement;
  /** performance.mark names waiting for the next draw (first paint, expand). */
  private pendingMeasures: string[] = [];
  private colorMode: ColorMode = 'structure';
  private selected: string | null = null;
  private panZoom: PanZoom;
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
    for (const m of ['structure', 'device', 'compute']) {  // 'memory' once a trace has figures
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
    const svgButton = html('button', { class: 'nbflow-button nbflow-export-svg', title: 'Download the view as SVG' }, bar, 'SVG');
    svgButton.addEventListener('click', () => download(new Blob([this.exportSvg()], { type: 'image/svg+xml' }), 'graph.svg'));
    const pngButton = html('button', { class: 'nbflow-button nbflow-export-png', title: 'Download the view as PNG' }, bar, 'PNG');
    pngButton.addEventListener('click', () => void this.exportPng().then(b => download(b, 'graph.png')));
    this.status = html('span', { class: 'nbflow-status nbflow-graph-status' }, bar);
    this.searchResults = html('div', { class: 'nbflow-search-results' }, this.node);
    const body = html('div', { class: 'nbflow-graph-body' }, this.node);
    const stage = html('div', { class: 'nbflow-graph-stage' }, body);
    this.svgEl = svg('svg', { class: 'nbflow-graph-canvas' });
    stage.appendChild(this.svgEl);
    const defs = svg('defs', {}, this.svgEl);
    this.markerId = `nbflow-arrow-${++markerCount}`;
    for (const [suffix, cls] of [['', 'nbflow-arrow'], ['-ref', 'nbflow-arrow nbflow-arrow-ref']]) {
      const marker = svg('marker', { id: this.markerId + suffix, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' }, defs);
      svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: cls }, marker);
    }
    this.viewport = svg('g', { class: 'nbflow-viewport' }, this.svgEl);
    this.minimap = new Minimap((x, y) => this.panTo(x, y));
    stage.appendChild(this.minimap.node);
    this.edgeTip = html('div', { class: 'nbflow-edge-label' }, stage);
    const side = html('div', { class: 'nbflow-graph-side' }, body);
    html('h4', {}, side, 'Details');
    this.details = html('div', { class: 'nbflow-graph-details' }, side, 'Click a node.');
    this.changesEl = html('div', { class: 'nbflow-graph-changes' }, side);
    html('h4', {}, side, 'Auxiliary nodes');
    this.asideList = html('div', { class: 'nbflow-graph-aside' }, side);
    const legend = html('details', { class: 'nbflow-graph-legend', open: '' }, side);
    html('summary', {}, legend, 'Legend');
    this.legendEl = html('div', {}, legend);
    this.panZoom = new PanZoom(this.svgEl, this.viewport, (t, width, height) => this.minimap.setViewport(t, width, height));
  }

  /**
   * Show a graph. With `compare` (a re-run of the graph shown so far), the ops it added or
   * changed are marked and the removed ones listed; pass false for an unrelated graph.
   */
  setGraphDef(def: GraphDef, compare = true): void {
    performance.mark('nbflow-graph-data');
    this.pendingMeasures.push('first-paint');
    this.node.dataset.state = 'layout';
    this.loading = this.loadGraphDef(def, compare, ++this.graphToken);
  }

  /** The graph being read (see loadGraphDef); reveal waits for it. */
  private loading: Promise<void> = Promise.resolve();
  private graphToken = 0;

  /**
   * Fold a GraphDef into the view's model in steps, giving the page back between them: on a
   * 10,000-op graph each step takes a few tens of milliseconds, the whole a few hundred, and no
   * single task may hold the main thread for 100 ms. A newer graph abandons an older one.
   */
  private async loadGraphDef(def: GraphDef, compare: boolean, token: number): Promise<void> {
    const graph = parseGraphDef(def);
    await yieldToPage();
    const groups = buildHierarchy(graph);
    await yieldToPage();
    const first = groupSignatures(graph, groups);
    await yieldToPage();
    groupSeries(graph, groups, first);
    await yieldToPage();
    const signatures = groupSignatures(graph, groups);
    const repeated = repeatedSignatures(groups, signatures);
    await yieldToPage();
    const aside = extractBookkeeping(graph, this.rules, this.keep);
    const previous = compare ? this.graph : null;
    const diff = previous ? diffGraphs(previous, graph) : null;
    await yieldToPage();
    if (token !== this.graphToken) {
      return;
    }
    this.graph = graph;
    this.groups = groups;
    this.signatures = signatures;
    this.repeated = repeated;
    this.aside = aside;
    this.setDiff(diff);
    for (const p of [...this.expanded]) {
      if (!this.groups.has(p)) {
        this.expanded.delete(p);
      }
    }
    await this.render(true);
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

  /**
   * Per-op output bytes from a traced step, for colouring by memory. An empty map (a trace
   * without allocation figures) takes the mode away and the legend says why.
   */
  setOpBytes(bytes: Map<string, number>): void {
    this.opBytes = bytes;
    let option = this.colorSelect.querySelector<HTMLOptionElement>("option[value='memory']");
    if (bytes.size && !option) {
      option = html('option', { value: 'memory' }, this.colorSelect, 'memory');
    } else if (!bytes.size) {
      option?.remove();
    }
    this.memoryNote = bytes.size ? '' : 'No memory colouring: the trace carries no allocation figures.';
    if (!bytes.size && this.colorMode === 'memory') {
      this.setColorMode('structure');
    } else if (this.colorMode === 'memory') {
      void this.render();
    } else {
      this.renderLegend();
    }
  }

  /** The ops a re-run added and changed are marked until the next graph arrives (or cleared). */
  setDiff(diff: GraphDiff | null): void {
    const empty = !diff || (!diff.added.length && !diff.removed.length && !diff.changed.length);
    this.diff = empty ? null : diff;
    this.diffAdded = new Set(this.diff?.added ?? []);
    this.diffChanged = new Set(this.diff?.changed ?? []);
    this.showChanges();
  }

  setColorMode(mode: ColorMode): void {
    this.colorMode = mode;
    this.colorSelect.value = mode;
    void this.render();
  }

  toggleGroup(path: string): void {
    performance.mark('nbflow-graph-expand-start');
    this.pendingMeasures.push('expand');
    if (this.expanded.has(path)) {
      this.expanded.delete(path);
    } else {
      this.expanded.add(path);
    }
    this.hooks.expanded?.([...this.expanded]);
    void this.render(true, true);
  }

  /** Expand exactly these groups (unknown paths are ignored); re-renders only on a change. */
  setExpanded(paths: Iterable<string>): void {
    const next = new Set([...paths].filter(p => this.groups.has(p) || !this.graph));
    if (next.size === this.expanded.size && [...next].every(p => this.expanded.has(p))) {
      return;
    }
    this.expanded = next;
    void this.render(true, true);
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
    void this.loading.then(() => this.revealNow(name));
  }

  private revealNow(name: string): void {
    if (!this.graph) {
      return;
    }
    groupsAround(this.graph, this.groups, name).forEach(s => this.expanded.add(s));
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
    if (box && this.panZoom.size().width) {
      this.panZoom.panTo(box.x, box.y, Math.max(this.panZoom.transform.k, 1));
    }
  }

  /**
   * Collapse the graph to what is shown, lay it out (in the worker) and draw it. `relayout` fits
   * the view to the new layout. `onlyExpansion` says that nothing but the set of expanded groups
   * changed since the last draw, so the nodes and edges drawn then can stay (see draw).
   */
  private async render(relayout = false, onlyExpansion = false): Promise<void> {
    if (!this.graph) {
      return;
    }
    const token = ++this.renderToken;
    if (!onlyExpansion) {
      this.lookChanged = true; // until drawn, even if a later expand overtakes this render
    }
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
    this.markDiffGroups(v);
    // colours by compute time or memory are scaled to the largest figure shown: all change
    const keep = !this.lookChanged && this.colorMode !== 'compute' && this.colorMode !== 'memory';
    this.draw(v, result, keep);
    this.lookChanged = false;
    this.minimap.setLayout(result, new Set(v.items.filter(i => i.expanded).map(i => i.id)));
    this.status.textContent = `${this.graph.ops.size} ops · ${v.items.length} shown · layout ${result.millis} ms (${layoutEngine})`;
    this.node.dataset.state = 'ready';
    this.node.dataset.layoutEngine = layoutEngine;
    if (relayout) {
      this.fit();
    } else {
      this.panZoom.apply();
    }
    this.renderAside();
    this.renderLegend();
    this.measurePaint();
  }

  /** Close the performance measures opened by new data or an expand, once the frame is painted. */
  private measurePaint(): void {
    const names = this.pendingMeasures.splice(0);
    if (!names.length) {
      return;
    }
    requestAnimationFrame(() =>
      setTimeout(() => {
        for (const n of new Set(names)) {
          performance.measure(`nbflow-graph-${n}`, n === 'expand' ? 'nbflow-graph-expand-start' : 'nbflow-graph-data');
        }
      }, 0)
    );
  }

  /** Which drawn groups hold ops the last re-run added or changed. */
  private markDiffGroups(v: VisibleGraph): void {
    this.diffGroups.clear();
    if (!this.diff || !this.graph) {
      return;
    }
    const touched = new Map<string, { added: number; other: number }>();
    const count = (name: string, added: boolean): void => {
      for (let p = this.graph!.ops.get(name)?.group ?? ''; p !== ''; p = this.groups.get(p)?.parent ?? '') {
        const c = touched.get(p) ?? { added: 0, other: 0 };
        c[added ? 'added' : 'other'] += 1;
        touched.set(p, c);
      }
    };
    this.diffAdded.forEach(n => count(n, true));
    this.diffChanged.forEach(n => count(n, false));
    for (const item of v.items) {
      const c = item.kind === 'group' ? touched.get(item.name) : undefined;
      if (c) {
        const all = c.added === this.groups.get(item.name)!.size && !c.other;
        this.diffGroups.set(item.name, all ? 'added' : 'changed');
      }
    }
  }

  private diffStatus(item: VisibleItem): 'added' | 'changed' | undefined {
    if (item.kind === 'group') {
      return this.diffGroups.get(item.name);
    }
    return this.diffAdded.has(item.name) ? 'added' : this.diffChanged.has(item.name) ? 'changed' : undefined;
  }

  /** The "Changes since the last run" box: counts, the removed ops, and a button to clear. */
  private showChanges(): void {
    const box = this.changesEl;
    box.textContent = '';
    const diff = this.diff;
    box.style.display = diff ? '' : 'none';
    if (!diff) {
      return;
    }
    html('h4', {}, box, 'Changed by the last re-run');
    const counts = html('div', { class: 'nbflow-diff-counts' }, box);
    counts.textContent = `+${diff.added.length} added · −${diff.removed.length} removed · ~${diff.changed.length} changed`;
    const list = (label: string, names: string[], cls: string): void => {
      if (!names.length) {
        return;
      }
      const r = html('div', { class: `nbflow-kv ${cls}` }, box);
      html('b', {}, r, label + ' ');
      html('span', {}, r, names.slice(0, 12).join(', ') + (names.length > 12 ? ` … ${names.length - 12} more` : ''));
    };
    list('added', diff.added, 'nbflow-diff-list-added');
    list('changed', diff.changed, 'nbflow-diff-list-changed');
    list('removed', diff.removed, 'nbflow-diff-list-removed');
    const clear = html('button', { class: 'nbflow-button nbflow-diff-clear' }, box, 'Clear marks');
    clear.addEventListener('click', () => {
      this.setDiff(null);
      void this.render();
    });
  }

  private renderLegend(): void {
    const scheme: LegendScheme = { mode: this.colorMode, notes: this.memoryNote ? [this.memoryNote] : [] };
    if (this.graph && this.visible) {
      if (this.colorMode === 'device') {
        const devices = new Set<string>();
        this.visible.items.forEach(i => devices.add(devicesBelow(this.graph!, this.groups, i)[0] || '(unplaced)'));
        scheme.devices = [...devices].sort().map(d => [d, colorFor(d)]);
      } else if (this.colorMode === 'compute' || this.colorMode === 'memory') {
        const max = this.maxFigure();
        scheme.scale = { low: heatColor(0), high: heatColor(1), max: this.colorMode === 'compute' ? `${formatNumber(max)} µs` : formatBytes(max) };
      }
    }
    const key = JSON.stringify(scheme);
    if (key !== this.legendKey) {  // rebuilding it unchanged would only make the page lay it out
      this.legendKey = key;
      renderLegend(this.legendEl, scheme, this.markerId);
    }
  }

  private legendKey = '';

  private perOpFigures(): ReadonlyMap<string, number> {
    return this.colorMode === 'memory' ? this.opBytes : this.opTimes;
  }

  private maxFigure(): number {
    const figures = this.perOpFigures();
    return Math.max(1, ...(this.visible?.items ?? []).map(i => computeTimeOf(this.groups, i, figures)));
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
    if (this.colorMode === 'compute' || this.colorMode === 'memory') {
      this.figureMax ??= this.maxFigure();
      return heatColor(computeTimeOf(this.groups, item, this.perOpFigures()) / this.figureMax);
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

  /** The largest figure over the drawn items, computed once per draw. */
  private figureMax: number | undefined;

  /** The drawn layers and, by id, the nodes and edges in them (see draw). */
  private layers: { clusters: SVGGElement; edges: SVGGElement; nodes: SVGGElement } | null = null;
  private drawnNodes = new Map<string, { el: SVGGElement; width: number; height: number; at: string }>();
  private drawnEdges = new Map<string, { el: SVGGElement; d: string }>();
  /** Whether something besides the expanded groups changed since the last draw. */
  private lookChanged = true;

  /**
   * Draw a laid-out graph. With `keep` (only the expanded groups changed: colours, marks and
   * sizes are as before), a node or edge drawn last time stays in the page and only moves; only
   * what is new is built. Expanding a group on a 10,000-op graph then builds the group's ops
   * and edges, not the whole view again, and the browser lays out (measures the text of) only
   * those: building every node anew costs about as much again as the new ones alone. Moved
   * elements keep their place in the DOM (re-inserting one is as costly as building it); new
   * ones go after them, which only changes which of two overlapping nodes is on top.
   */
  private draw(v: VisibleGraph, layout: LayoutResult, keep = false): void {
    this.figureMax = undefined;
    if (!keep || !this.layers) {
      this.viewport.textContent = '';
      this.layers = {
        clusters: svg('g', { class: 'nbflow-clusters' }, this.viewport),
        edges: svg('g', { class: 'nbflow-edges' }, this.viewport),
        nodes: svg('g', { class: 'nbflow-nodes' }, this.viewport)
      };
      this.drawnNodes.clear();
      this.drawnEdges.clear();
    }
    const { clusters, edges: edgeLayer, nodes: nodeLayer } = this.layers;
    clusters.textContent = '';
    const nodesBefore = this.drawnNodes;
    const edgesBefore = this.drawnEdges;
    this.drawnNodes = new Map();
    this.drawnEdges = new Map();
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
    const visibleEdges = new Map(v.edges.map(x => [`${x.src}\u0000${x.dst}`, x]));
    for (const e of layout.edges) {
      const ve = visibleEdges.get(`${e.src}\u0000${e.dst}`);
      if (!e.points.length || !ve) {
        continue;
      }
      const d = 'M' + e.points.map(p => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join('L');
      const width = ve.kind === 'control' ? 1 : strokeWidthFor(edgeElements(this.graph!, ve));
      const key = `${ve.src}\u0000${ve.dst}\u0000${ve.kind}\u0000${width.toFixed(2)}`;
      const drawn = edgesBefore.get(key);
      if (drawn) {
        edgesBefore.delete(key);
        if (drawn.d !== d) {
          drawn.el.querySelectorAll('path').forEach(p => p.setAttribute('d', d));
          drawn.d = d;
        }
        this.drawnEdges.set(key, drawn);
        continue;
      }
      const g = svg('g', { class: `nbflow-edge-group nbflow-edge-kind-${ve.kind}`, 'data-src': ve.src, 'data-dst': ve.dst, 'data-kind': ve.kind }, edgeLayer);
      this.drawnEdges.set(key, { el: g, d });
      svg('path', {
        d,
        class: `nbflow-edge nbflow-edge-${ve.kind}`,
        'stroke-width': width.toFixed(2),
        'marker-end': `url(#${this.markerId}${ve.kind === 'ref' ? '-ref' : ''})`
      }, g);
      // a wide transparent twin makes thin edges easy to point at
      svg('path', { d, class: 'nbflow-edge-hit', 'data-export': 'skip' }, g);
      g.addEventListener('pointerenter', ev => this.showEdgeLabel(ve, ev));
      g.addEventListener('pointermove', ev => this.moveEdgeLabel(ev));
      g.addEventListener('pointerleave', () => (this.edgeTip.style.display = 'none'));
    }
    for (const { el } of edgesBefore.values()) {
      el.remove();
    }
    for (const item of v.items) {
      if (item.expanded) {
        continue;
      }
      const b = layout.boxes[item.id];
      const at = `translate(${b.x - b.width / 2},${b.y - b.height / 2})`;
      const drawn = nodesBefore.get(item.id);
      if (drawn && drawn.width === b.width && drawn.height === b.height) {
        nodesBefore.delete(item.id);
        if (drawn.at !== at) {
          drawn.el.setAttribute('transform', at);
          drawn.at = at;
        }
        drawn.el.classList.toggle('nbflow-selected', this.selected === item.id);
        this.drawnNodes.set(item.id, drawn);
        continue;
      }
      const cls = item.kind === 'group' ? 'nbflow-node nbflow-group' : 'nbflow-node nbflow-op';
      const diff = this.diffStatus(item);
      const marked = (this.isHighlighted(item) ? ' nbflow-highlight' : '') + (diff ? ` nbflow-diff-${diff}` : '');
      const g = svg('g', {
        class: cls + marked + (this.selected === item.id ? ' nbflow-selected' : ''),
        'data-id': item.id,
        'data-name': item.name,
        transform: at
      }, nodeLayer);
      this.drawnNodes.set(item.id, { el: g, width: b.width, height: b.height, at });
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
    for (const { el } of nodesBefore.values()) {
      el.remove();
    }
    this.lastLayout = layout;
  }

  private lastLayout: LayoutResult | null = null;

  private showEdgeLabel(edge: VisibleGraph['edges'][number], ev: PointerEvent): void {
    const tip = this.edgeTip;
    tip.textContent = edgeLabel(this.graph!, edge);
    tip.dataset.kind = edge.kind;
    tip.style.display = 'block';
    this.moveEdgeLabel(ev);
  }

  private moveEdgeLabel(ev: PointerEvent): void {
    const r = (this.edgeTip.parentElement as HTMLElement).getBoundingClientRect();
    this.edgeTip.style.left = `${ev.clientX - r.left + 12}px`;
    this.edgeTip.style.top = `${ev.clientY - r.top + 12}px`;
  }

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
    if (!this.graph || !this.selected) {
      return;
    }
    renderDetails(this.details, this.selected, {
      graph: this.graph,
      groups: this.groups,
      signatures: this.signatures,
      repeated: this.repeated,
      opTimes: this.opTimes,
      opBytes: this.opBytes,
      extraDetails: this.extraDetails,
      diffStatus: name => this.diffStatus({ id: opId(name), kind: 'op', name, label: '', parent: '', expanded: false }),
      openCell: this.hooks.openCell && ((cell, line) => this.hooks.openCell!(cell, line))
    });
  }

  /** The view as a standalone SVG file of what is on screen. */
  exportSvg(): string {
    const rect = this.svgEl.getBoundingClientRect();
    return standaloneSvg(this.svgEl, Math.round(rect.width), Math.round(rect.height));
  }

  /** The view as PNG (the exported SVG drawn into a canvas at twice the screen's pixels). */
  exportPng(): Promise<Blob> {
    const rect = this.svgEl.getBoundingClientRect();
    return svgToPng(this.exportSvg(), Math.round(rect.width), Math.round(rect.height));
  }

  /** Centre the view on the layout point (x, y), keeping the zoom (the minimap's pan). */
  panTo(x: number, y: number): void {
    this.panZoom.panTo(x, y);
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

  private asideKey = '';

  private renderAside(): void {
    const list = this.visible?.aside ?? [];
    const key = JSON.stringify([list, [...this.keep]]);
    if (key === this.asideKey) {
      return; // unchanged: rebuilding it would only make the page lay it out again
    }
    this.asideKey = key;
    this.asideList.textContent = '';
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

  /** Scale and centre the whole graph into the view. */
  fit(): void {
    if (this.lastLayout) {
      this.panZoom.fit(this.lastLayout);
    }
  }
}

/** Let the page run (paint, input) before the next step: a macrotask, without setTimeout's clamping. */
function yieldToPage(): Promise<void> {
  return new Promise(resolve => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(null);
  });
}
