/**
 * The nbflow Board panel: the runs of one or several log directories as tabs Graph, Scalars,
 * Histograms, Distributions, Images and Timeline, polled live. Data arrives incrementally: each
 * series remembers the offset to ask from, so a poll transfers only the points written since
 * the last one.
 *
 * Runs side by side: the log directory field takes a path or TensorBoard's
 * `name:path,name:path` (model/runs.ts); each run gets a colour once and keeps it, and the runs
 * table beside the charts (views/runsView.ts) shows, hides, filters and sorts runs by their
 * hyperparameters for every chart tab at once.
 */
import { Widget } from '@lumino/widgets';

import { BoardApi, RunInfo } from './api';
import { BookkeepingRules } from './model/auxiliary';
import { LogdirEntry, RunColors, parseLogdirSpec, runId } from './model/runs';
import { ScalarSeries, appendReply, emptySeries, runLabel } from './model/series';
import { opBytes, opTimes } from './model/trace';
import { DistributionsView } from './views/distributionsView';
import { GraphView } from './views/graphView';
import { HistogramSeries, HistogramsView } from './views/histogramsView';
import { ImageSeries, ImagesView } from './views/imagesView';
import { RunsView } from './views/runsView';
import { ScalarsView } from './views/scalarsView';
import { TimelineView } from './views/timelineView';
import { html } from './views/dom';

export const TABS = ['Graph', 'Scalars', 'Histograms', 'Distributions', 'Images', 'Timeline'] as const;
export type Tab = (typeof TABS)[number];
/** The tabs that compare runs: the runs table stands beside them. */
const RUN_TABS: readonly Tab[] = ['Scalars', 'Histograms', 'Distributions', 'Images'];

/** A run as the board knows it: its board-wide id, its log directory and its name there. */
export interface BoardRun extends RunInfo {
  id: string;
  entry: LogdirEntry;
  api: BoardApi;
}

export interface BoardOptions {
  logdir: string;
  bookkeeping?: Partial<BookkeepingRules>;
  pollMillis?: number;
  /** Jump to the notebook cell that created an op (the graph's "created at" link). */
  openCell?: (cell: string, line: number) => boolean;
}

const key = (run: string, tag: string): string => `${run}\u0000${tag}`;

export class BoardPanel extends Widget {
  /** The log directory, or several as `name:path,name:path`. */
  logdir: string;
  private apis: BoardApi[] = [];
  private runs: BoardRun[] = [];
  private logdirErrors: string[] = [];
  readonly colors = new RunColors();
  private scalars = new Map<string, ScalarSeries>();
  private histograms = new Map<string, HistogramSeries>();
  private images = new Map<string, ImageSeries>();
  private graphRun = '';
  /** The run whose graph is shown and its graph version ("run\u0000version"). */
  private graphLoaded = '';
  private traceLoaded = '';

  private timer: number | undefined;
  private polling = false;
  private live = true;
  private pollMillis: number;
  private statusEl: HTMLElement;
  private warningsEl: HTMLElement;
  private logdirInput: HTMLInputElement;
  private runSelect: HTMLSelectElement;
  private views: Record<Tab, HTMLElement>;
  private tabButtons = new Map<Tab, HTMLElement>();
  readonly graphView: GraphView;
  readonly scalarsView = new ScalarsView();
  readonly histogramsView = new HistogramsView();
  readonly distributionsView = new DistributionsView();
  readonly runsView: RunsView;
  readonly imagesView: ImagesView;
  readonly timelineView = new TimelineView();

  constructor(options: BoardOptions) {
    super();
    this.logdir = options.logdir;
    this.pollMillis = options.pollMillis ?? 2000;
    this.addClass('nbflow-board');
    this.id = `nbflow-board-${encodeURIComponent(this.logdir)}`;
    this.title.label = `Board: ${this.logdir}`;
    this.title.caption = `nbflow Board on ${this.logdir}`;
    this.title.closable = true;
    this.graphView = new GraphView(options.bookkeeping, { openCell: options.openCell });
    this.imagesView = new ImagesView((run, tag, index) => {
      const r = this.run(run);
      return r ? r.api.imageBlob(r.name, tag, index) : Promise.reject(new Error(`no run ${run}`));
    });
    this.runsView = new RunsView(this.colors, run => runLabel(run, this.logdir));
    this.runsView.onChange = () => this.restyle();
    this.restyle();

    const header = html('div', { class: 'nbflow-header' }, this.node);
    html('span', { class: 'nbflow-brand' }, header, 'nbflow Board');
    this.logdirInput = html('input', { class: 'nbflow-logdir', value: this.logdir, title: 'Log directory relative to the server root, or several: name:path,name:path' }, header);
    this.logdirInput.addEventListener('change', () => this.setLogdir(this.logdirInput.value));
    const liveLabel = html('label', { class: 'nbflow-live' }, header);
    const liveBox = html('input', { type: 'checkbox' }, liveLabel);
    liveBox.checked = true;
    liveLabel.append(' live');
    liveBox.addEventListener('change', () => {
      this.live = liveBox.checked;
      this.schedule();
    });
    const refresh = html('button', { class: 'nbflow-button' }, header, 'Refresh');
    refresh.addEventListener('click', () => void this.poll());
    const tabs = html('div', { class: 'nbflow-tabs' }, header);
    for (const t of TABS) {
      const b = html('button', { class: 'nbflow-tab', 'data-tab': t }, tabs, t);
      b.addEventListener('click', () => this.showTab(t));
      this.tabButtons.set(t, b);
    }
    this.statusEl = html('span', { class: 'nbflow-status nbflow-board-status' }, header);
    this.warningsEl = html('div', { class: 'nbflow-warnings' }, this.node);

    const graphTab = html('div', { class: 'nbflow-view' });
    const graphBar = html('div', { class: 'nbflow-toolbar' }, graphTab);
    html('label', {}, graphBar, 'Run');
    this.runSelect = html('select', { class: 'nbflow-run-select' }, graphBar);
    this.runSelect.addEventListener('change', () => {
      this.graphRun = this.runSelect.value;
      void this.loadGraph();
    });
    graphTab.appendChild(this.graphView.node);
    this.views = {
      Graph: graphTab,
      Scalars: this.scalarsView.node,
      Histograms: this.histogramsView.node,
      Distributions: this.distributionsView.node,
      Images: this.imagesView.node,
      Timeline: this.timelineView.node
    };
    const main = html('div', { class: 'nbflow-main' }, this.node);
    main.appendChild(this.runsView.node);
    const body = html('div', { class: 'nbflow-body' }, main);
    for (const t of TABS) {
      this.views[t].classList.add('nbflow-view');
      this.views[t].dataset.view = t;
      body.appendChild(this.views[t]);
    }
    this.timelineView.select.addEventListener('change', () => void this.loadTrace(this.timelineView.select.value));
    this.showTab('Graph');
    this.connect();
    void this.poll();
  }

  /** One API per log directory of the spec; a spec that does not parse is shown, not thrown. */
  private connect(): void {
    this.scalarsView.logdir = this.logdir;
    try {
      this.apis = parseLogdirSpec(this.logdir).map(e => new BoardApi(e.path, undefined, e));
      this.logdirErrors = [];
    } catch (err) {
      this.apis = [];
      this.logdirErrors = [String((err as Error).message ?? err)];
    }
  }

  /** The run with this board-wide id. */
  run(id: string): BoardRun | undefined {
    return this.runs.find(r => r.id === id);
  }

  /** The runs table's rows: each run's hyperparameters and its scalars' last values. */
  private updateRunsTable(): void {
    const metrics = new Map<string, Record<string, number | null>>();
    for (const s of this.scalars.values()) {
      if (s.values.length) {
        metrics.set(s.run, { ...metrics.get(s.run), [s.tag]: s.values[s.values.length - 1] });
      }
    }
    this.runsView.setRuns(this.runs.map(r => ({ id: r.id, hparams: r.hparams ?? {}, metrics: metrics.get(r.id) ?? {} })));
  }

  /** Colours and shown runs from the runs table, to every view comparing runs. */
  private restyle(): void {
    const color = (run: string): string => this.colors.color(run);
    const shown = (run: string): boolean => this.runsView.isVisible(run);
    this.scalarsView.setRunStyle(color, shown);
    this.histogramsView.setRunStyle(color, shown);
    this.distributionsView.setRunStyle(color, shown);
    this.imagesView.setData([...this.images.values()].filter(s => shown(s.run)));
  }

  /** Switch the board to other log directories, dropping everything loaded so far. */
  setLogdir(logdir: string): void {
    this.logdir = logdir;
    this.logdirInput.value = logdir;
    this.connect();
    this.title.label = `Board: ${logdir}`;
    this.runs = [];
    this.colors.clear();
    this.runsView.setRuns([]);
    this.scalars.clear();
    this.histograms.clear();
    this.images.clear();
    this.graphLoaded = this.traceLoaded = this.graphRun = '';
    this.scalarsView.setData([], []);
    this.histogramsView.setData([]);
    this.distributionsView.setData([]);
    this.imagesView.setData([]);
    this.timelineView.setTraceOptions([]);
    this.showWarnings();
    this.polling = false; // a poll of the old directory still in flight is abandoned
    void this.poll();
  }

  setBookkeeping(rules: Partial<BookkeepingRules>): void {
    this.graphView.setRules(rules);
  }

  showTab(tab: Tab): void {
    this.node.dataset.tab = tab;
    this.runsView.node.style.display = RUN_TABS.includes(tab) ? '' : 'none';
    for (const t of TABS) {
      this.views[t].style.display = t === tab ? '' : 'none';
      this.tabButtons.get(t)!.classList.toggle('nbflow-tab-active', t === tab);
    }
    if (tab === 'Graph') {
      requestAnimationFrame(() => this.graphView.fit());
    }
  }

  protected onBeforeDetach(): void {
    window.clearTimeout(this.timer);
  }

  dispose(): void {
    window.clearTimeout(this.timer);
    super.dispose();
  }

  private schedule(): void {
    window.clearTimeout(this.timer);
    if (this.live && !this.isDisposed) {
      this.timer = window.setTimeout(() => void this.poll(), this.pollMillis);
    }
  }

  /** One round of incremental updates for everything the log directory holds. */
  async poll(): Promise<void> {
    if (this.polling || this.isDisposed) {
      return;
    }
    this.polling = true;
    const apis = this.apis;
    if (!this.runs.length) {
      this.node.classList.add('nbflow-loading');
      this.statusEl.textContent = `Loading runs of ${this.logdir}…`;
    }
    try {
      const several = apis.length > 1;
      const errors: string[] = [];
      const listed = await Promise.all(
        apis.map(api =>
          api.runs().then(
            reply => reply.runs.map(r => ({ ...r, id: runId(api.entry, r.name, several), entry: api.entry, api })),
            (err: Error) => {
              if (!several) {
                throw err;
              }
              errors.push(`${api.entry.name}: ${err.message ?? err}`); // the other directories still show
              return [] as BoardRun[];
            }
          )
        )
      );
      if (apis !== this.apis) {
        return;
      }
      this.node.classList.remove('nbflow-loading');
      this.runs = listed.flat();
      this.logdirErrors = errors;
      this.updateRunsTable();
      this.dropGone();
      this.showWarnings();
      await Promise.all([this.pollScalars(apis), this.pollHistograms(apis), this.pollImages(apis)]);
      if (apis !== this.apis) {
        return; // the log directory changed meanwhile: its runs' graphs and traces are not ours
      }
      this.updateRunsTable();
      this.updateRunSelect();
      if (this.graphRun && this.graphLoaded !== this.graphKey(this.graphRun)) {
        await this.loadGraph();
      }
      const traces = this.runs.flatMap(r => r.tags.traces.map(t => `${r.id}/${t}`));
      this.timelineView.setTraceOptions(traces);
      if (traces.length && !this.traceLoaded) {
        const preferred = traces.find(t => t.startsWith(`${this.graphRun}/`)) ?? traces[0];
        await this.loadTrace(preferred);
      }
      const points = [...this.scalars.values()].reduce((n, s) => n + s.steps.length, 0);
      this.statusEl.textContent = `${this.runs.length} run(s) · ${points} scalar points · ${new Date().toLocaleTimeString()}`;
      this.node.dataset.polls = String(Number(this.node.dataset.polls ?? 0) + 1);
    } catch (err) {
      if (apis === this.apis) {
        this.node.classList.remove('nbflow-loading');
        this.statusEl.textContent = String((err as Error).message ?? err);
      }
    } finally {
      if (apis === this.apis) {
        this.polling = false;
        this.schedule();
      }
    }
  }

  /** Forget series of runs and tags the server no longer lists (deleted runs). */
  private dropGone(): void {
    const listed = new Set<string>();
    for (const r of this.runs) {
      for (const tag of [...r.tags.scalars, ...r.tags.histograms, ...r.tags.images]) {
        listed.add(key(r.id, tag));
      }
    }
    const prune = <T>(m: Map<string, T>): boolean => {
      const gone = [...m.keys()].filter(k => !listed.has(k));
      gone.forEach(k => m.delete(k));
      return gone.length > 0;
    };
    if (prune(this.scalars)) {
      this.scalarsView.setData([...this.scalars.values()], this.runs.map(r => r.id));
    }
    if (prune(this.histograms)) {
      this.histogramsView.setData([...this.histograms.values()]);
      this.distributionsView.setData([...this.histograms.values()]);
    }
    prune(this.images);
    if (this.traceLoaded && !this.runs.some(r => r.tags.traces.some(t => `${r.id}/${t}` === this.traceLoaded))) {
      this.traceLoaded = '';
    }
  }

  /** What the server could not read, run by run: file and offset of each damaged record. */
  private showWarnings(): void {
    this.warningsEl.textContent = '';
    for (const message of this.logdirErrors) {
      html('div', { class: 'nbflow-warning nbflow-logdir-error' }, this.warningsEl, `⚠ ${message}`);
    }
    for (const r of this.runs) {
      for (const w of r.tags.warnings ?? []) {
        const line = html('div', { class: 'nbflow-warning', 'data-run': r.id }, this.warningsEl);
        line.textContent = `⚠ ${r.id}: ${w.file} at byte ${w.offset}: ${w.message}`;
      }
    }
    this.warningsEl.style.display = this.warningsEl.childElementCount ? '' : 'none';
  }

  private async pollScalars(apis: BoardApi[]): Promise<void> {
    let changed = false;
    await Promise.all(
      this.runs.flatMap(r =>
        r.tags.scalars.map(async tag => {
          const k = key(r.id, tag);
          const s = this.scalars.get(k) ?? emptySeries(r.id, tag);
          const reply = await r.api.scalars(r.name, tag, s.nextOffset);
          if (apis !== this.apis) {
            return; // the log directory changed meanwhile
          }
          if (reply.steps.length || !this.scalars.has(k)) {
            this.scalars.set(k, appendReply(s, reply));
            changed = true;
          }
        })
      )
    );
    if (changed) {
      this.scalarsView.setData([...this.scalars.values()], this.runs.map(r => r.id));
    }
  }

  private async pollHistograms(apis: BoardApi[]): Promise<void> {
    let changed = false;
    await Promise.all(
      this.runs.flatMap(r =>
        r.tags.histograms.map(async tag => {
          const k = key(r.id, tag);
          const known = this.histograms.get(k);
          const reply = await r.api.histograms(r.name, tag, known?.nextOffset ?? 0);
          if (apis !== this.apis) {
            return; // the log directory changed meanwhile
          }
          // a reply from offset 0 to a series that had points: the run restarted, start over
          const s = known && reply.offset !== 0 ? known : { run: r.id, tag, steps: [], values: [], nextOffset: 0 };
          if (reply.offset === s.nextOffset && (reply.steps.length || s !== known)) {
            this.histograms.set(k, { ...s, steps: s.steps.concat(reply.steps), values: s.values.concat(reply.values), nextOffset: reply.next_offset });
            changed = true;
          }
        })
      )
    );
    if (changed) {
      this.histogramsView.setData([...this.histograms.values()]);
      this.distributionsView.setData([...this.histograms.values()]);
    }
  }

  private async pollImages(apis: BoardApi[]): Promise<void> {
    await Promise.all(
      this.runs.flatMap(r =>
        r.tags.images.map(async tag => {
          const k = key(r.id, tag);
          const known = this.images.get(k);
          const reply = await r.api.images(r.name, tag, known?.nextOffset ?? 0);
          if (apis !== this.apis) {
            return; // the log directory changed meanwhile
          }
          // a reply from offset 0 to a series that had points: the run restarted, start over
          const s = known && reply.offset !== 0 ? known : { run: r.id, tag, steps: [], values: [], nextOffset: 0 };
          if (reply.offset === s.nextOffset) {
            this.images.set(k, { ...s, steps: s.steps.concat(reply.steps), values: s.values.concat(reply.values), nextOffset: reply.next_offset });
          }
        })
      )
    );
    this.imagesView.setData([...this.images.values()].filter(s => this.runsView.isVisible(s.run)));
  }

  private updateRunSelect(): void {
    const withGraph = this.runs.filter(r => r.tags.graph).map(r => r.id);
    const current = [...this.runSelect.options].map(o => o.value);
    if (current.join('\n') !== withGraph.join('\n')) {
      this.runSelect.textContent = '';
      for (const r of withGraph) {
        html('option', { value: r }, this.runSelect, runLabel(r, this.logdir));
      }
    }
    if (!withGraph.includes(this.graphRun)) {
      this.graphRun = withGraph[0] ?? '';
    }
    this.runSelect.value = this.graphRun;
  }

  /** The run and the version of its graph, to notice a re-run that logged a new graph. */
  private graphKey(run: string): string {
    return `${run}\u0000${this.runs.find(r => r.id === run)?.tags.graph_version ?? 0}`;
  }

  private async loadGraph(): Promise<void> {
    const run = this.run(this.graphRun);
    if (!run) {
      return;
    }
    const apis = this.apis;
    const id = this.graphRun;
    const sameRun = this.graphLoaded.split('\u0000')[0] === id;
    this.graphLoaded = this.graphKey(id);
    const def = await run.api.graph(run.name);
    if (apis !== this.apis || id !== this.graphRun) {
      return; // another directory or run was chosen meanwhile
    }
    // a new version of the run shown is compared with it (the graph diff); another run is not
    this.graphView.setGraphDef(def, sameRun);
  }

  private async loadTrace(option: string): Promise<void> {
    const slash = option.lastIndexOf('/');
    const run = this.run(option.slice(0, slash));
    const name = option.slice(slash + 1);
    this.traceLoaded = option;
    this.timelineView.select.value = option;
    if (!run) {
      return;
    }
    const trace = await run.api.trace(run.name, name);
    this.timelineView.setTrace(trace);
    this.graphView.setOpTimes(opTimes(trace));
    this.graphView.setOpBytes(opBytes(trace));
  }
}
