/**
 * Scalar charts: one chart per tag, the shown runs overlaid in their colours; smoothing (on the
 * full series, before downsampling to the chart's width), step / relative / wall-time axes,
 * log scale, TensorBoard's outlier-aware y range, a tag filter and CSV download. Which runs
 * are shown and their colours come from the host (the Board's runs table); alone (the
 * notebook widget) every run is shown, coloured in order of appearance.
 *
 * Hovering a chart shows TensorBoard's readout: a crosshair, each run's point nearest the
 * pointer marked, and a table of its smoothed and raw value, step, time and relative time.
 * Dragging a box on a chart zooms to it, as TensorBoard's cards do (a flat box, under 4 pixels
 * high, zooms x only and the y axis fits what is in the span); a double-click zooms back out.
 * Zoom and hover outlive live updates. A chart's pin puts a copy of it in a "Pinned" row at
 * the top (kept in the browser's storage, so pins outlive a reload), as TensorBoard's pinned
 * cards are.
 */
import { RunColors } from '../model/runs';
import {
  Extent,
  Readout,
  ScalarSeries,
  XAxis,
  downsampleMinMax,
  extent,
  indicesInRange,
  readoutAt,
  filterTags,
  formatDuration,
  formatWallTime,
  runLabel,
  smooth,
  ticks,
  toCsv,
  xValues,
  yDomain
} from '../model/series';
import { formatNumber, html, svg, title } from './dom';

let clipCount = 0;

const PINS_KEY = 'nbflow-scalars-pinned';

function loadPins(): Set<string> {
  try {
    return new Set(JSON.parse(window.localStorage.getItem(PINS_KEY) ?? '[]') as string[]);
  } catch {
    return new Set(); // no storage here (or a bad entry): pins last this session only
  }
}

const WIDTH = 420;
const HEIGHT = 240;
const MARGIN = { left: 56, right: 12, top: 22, bottom: 30 };

/** What a host (a notebook widget) hears when the user changes the smoothing or the x axis. */
export interface ScalarsViewHooks {
  smoothing?(weight: number): void;
  axis?(axis: XAxis): void;
}

export class ScalarsView {
  readonly node: HTMLElement;
  private series: ScalarSeries[] = [];
  /** The log directory the runs are in: names run "." in legends. */
  logdir = '';
  private smoothing = 0.6;
  private axis: XAxis = 'step';
  private logScale = false;
  private ignoreOutliers = true;
  private filter = '';
  private ownColors = new RunColors();
  private colorOf: (run: string) => string = run => this.ownColors.color(run);
  private isShown: (run: string) => boolean = () => true;
  private charts: HTMLElement;
  /** Per tag, the box a chart is zoomed to: its x span (on the current axis) and y range. */
  private zoom = new Map<string, { x: Extent; y?: Extent }>();
  /** The chart under the pointer (its tag, "pinned:" before a pinned copy's) and where (SVG
   * x), so a re-render keeps its readout. */
  private hover: { key: string; px: number } | null = null;
  private pinned = loadPins();
  private smoothingInput: HTMLInputElement;
  private smoothingShown: HTMLElement;
  private axisSelect: HTMLSelectElement;

  constructor(private hooks: ScalarsViewHooks = {}) {
    this.node = html('div', { class: 'nbflow-scalars' });
    const bar = html('div', { class: 'nbflow-toolbar' }, this.node);
    const filter = html('input', { type: 'search', placeholder: 'Filter tags (regex)', class: 'nbflow-tag-filter' }, bar);
    filter.addEventListener('input', () => {
      this.filter = filter.value;
      this.render();
    });
    html('label', {}, bar, 'Smoothing');
    const slider = html('input', { type: 'range', min: '0', max: '0.99', step: '0.01', value: String(this.smoothing), class: 'nbflow-smoothing' }, bar);
    const shown = html('span', { class: 'nbflow-smoothing-value' }, bar, String(this.smoothing));
    slider.addEventListener('input', () => {
      this.smoothing = Number(slider.value);
      shown.textContent = slider.value;
      this.hooks.smoothing?.(this.smoothing);
      this.render();
    });
    const axis = html('select', { class: 'nbflow-axis' }, bar);
    for (const a of ['step', 'relative', 'wall']) {
      html('option', { value: a }, axis, a);
    }
    axis.addEventListener('change', () => {
      this.axis = axis.value as XAxis;
      this.zoom.clear(); // a span of steps is no span of seconds
      this.hooks.axis?.(this.axis);
      this.render();
    });
    this.smoothingInput = slider;
    this.smoothingShown = shown;
    this.axisSelect = axis;
    const logLabel = html('label', {}, bar);
    const log = html('input', { type: 'checkbox', class: 'nbflow-log' }, logLabel);
    logLabel.append(' log scale');
    log.addEventListener('change', () => {
      this.logScale = log.checked;
      this.render();
    });
    const outlierLabel = html('label', { title: "Scale the y axis to the 5th-95th percentile of the lines' values, as TensorBoard does by default" }, bar);
    const outliers = html('input', { type: 'checkbox', class: 'nbflow-outliers' }, outlierLabel);
    outliers.checked = this.ignoreOutliers;
    outlierLabel.append(' ignore outliers');
    outliers.addEventListener('change', () => {
      this.ignoreOutliers = outliers.checked;
      this.render();
    });
    const csv = html('button', { class: 'nbflow-button nbflow-csv' }, bar, 'Download CSV');
    csv.addEventListener('click', () => this.downloadCsv());
    this.charts = html('div', { class: 'nbflow-charts' }, this.node);
    // A redraw under the pointer (a live update, a zoom) replaces the overlay the pointer
    // entered, and the browser may then send the pointer's leave to the removed one: leaving
    // the charts clears the hover too, or a readout would stay up with no pointer on its chart.
    this.charts.addEventListener('mouseleave', () => {
      this.hover = null;
      this.charts.querySelectorAll<HTMLElement>('.nbflow-readout').forEach(r => (r.hidden = true));
      this.charts.querySelectorAll('g.nbflow-hover').forEach(g => g.setAttribute('visibility', 'hidden'));
    });
  }

  /** Set the smoothing weight and the x axis from outside (the toolbar follows). */
  setOptions(options: { smoothing?: number; axis?: XAxis }): void {
    if (options.smoothing !== undefined) {
      this.smoothing = options.smoothing;
      this.smoothingInput.value = String(options.smoothing);
      this.smoothingShown.textContent = String(options.smoothing);
    }
    if (options.axis !== undefined && options.axis !== this.axis) {
      this.zoom.clear();
    }
    if (options.axis !== undefined) {
      this.axis = options.axis;
      this.axisSelect.value = options.axis;
    }
    this.render();
  }

  setData(series: ScalarSeries[], runs: string[]): void {
    this.series = series;
    this.ownColors.assign(runs);
    this.render();
  }

  /** Take run colours and visibility from the host (the Board's runs table). */
  setRunStyle(color: (run: string) => string, isShown: (run: string) => boolean): void {
    this.colorOf = color;
    this.isShown = isShown;
    this.render();
  }

  /** The series drawn: of shown runs, with a tag matching the filter. */
  visibleSeries(): ScalarSeries[] {
    const shown = this.series.filter(s => this.isShown(s.run));
    const tags = new Set(filterTags([...new Set(shown.map(s => s.tag))], this.filter));
    return shown.filter(s => tags.has(s.tag));
  }

  csv(): string {
    return toCsv(this.visibleSeries());
  }

  private downloadCsv(): void {
    const url = URL.createObjectURL(new Blob([this.csv()], { type: 'text/csv' }));
    const a = html('a', { href: url, download: 'nbflow-scalars.csv' });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  render(): void {
    this.charts.textContent = '';
    const byTag = new Map<string, ScalarSeries[]>();
    for (const s of this.visibleSeries()) {
      byTag.set(s.tag, [...(byTag.get(s.tag) ?? []), s]);
    }
    if (!byTag.size) {
      html('div', { class: 'nbflow-empty' }, this.charts, 'No scalar summaries yet.');
    }
    const tags = [...byTag.keys()].sort();
    const pinned = tags.filter(t => this.pinned.has(t));
    if (pinned.length) {
      const row = html('div', { class: 'nbflow-pinned' }, this.charts);
      html('div', { class: 'nbflow-section-title' }, row, 'Pinned');
      for (const tag of pinned) {
        row.appendChild(this.chart(tag, byTag.get(tag)!, true));
      }
    }
    for (const tag of tags) {
      this.charts.appendChild(this.chart(tag, byTag.get(tag)!));
    }
  }

  private togglePin(tag: string): void {
    if (!this.pinned.delete(tag)) {
      this.pinned.add(tag);
    }
    try {
      window.localStorage.setItem(PINS_KEY, JSON.stringify([...this.pinned]));
    } catch {
      // no storage: the pin lasts this session
    }
    this.render();
  }

  private chart(tag: string, series: ScalarSeries[], pinnedCopy = false): HTMLElement {
    const box = html('div', { class: 'nbflow-chart', 'data-tag': tag });
    const heading = html('div', { class: 'nbflow-chart-title' }, box);
    html('span', {}, heading, tag);
    const isPinned = this.pinned.has(tag);
    const pin = html('button', { class: 'nbflow-pin', 'aria-pressed': String(isPinned), title: isPinned ? 'Unpin' : 'Pin to the top' }, heading, isPinned ? 'unpin' : 'pin');
    pin.addEventListener('click', () => this.togglePin(tag));
    const root = svg('svg', { width: WIDTH, height: HEIGHT, viewBox: `0 0 ${WIDTH} ${HEIGHT}` });
    box.appendChild(root);
    const zoom = this.zoom.get(tag);
    const lines = series.map(s => {
      const xs = xValues(s, this.axis);
      const raw = s.values.map(v => (this.logScale && v !== null && v <= 0 ? null : v));
      const smoothed = smooth(raw, this.smoothing); // on the whole series, zoomed or not
      const [a, b] = zoom ? indicesInRange(xs, zoom.x) : [0, xs.length];
      return { s, xs, raw, smoothed, shown: { xs: xs.slice(a, b), raw: raw.slice(a, b), smoothed: smoothed.slice(a, b) } };
    });
    const xe = zoom?.x ?? extent(lines.flatMap(l => l.xs));
    // as TensorBoard: with smoothing on, the faint raw lines do not stretch the y axis
    const drawn = lines.flatMap(l => {
      const inside = l.shown.xs.map(x => !zoom || (x >= zoom.x.min && x <= zoom.x.max));
      return (this.smoothing > 0 ? l.shown.smoothed : l.shown.raw).filter((_, i) => inside[i]);
    });
    const ye = zoom?.y ?? yDomain(drawn, { ignoreOutliers: this.ignoreOutliers, log: this.logScale });
    if (!xe || !ye) {
      return box;
    }
    box.dataset.yMin = String(ye.min);
    box.dataset.yMax = String(ye.max);
    const fy = (v: number): number => (this.logScale ? Math.log10(v) : v);
    const y0 = fy(ye.min);
    const y1 = fy(ye.max) === y0 ? y0 + 1 : fy(ye.max);
    const x1 = xe.max === xe.min ? xe.min + 1 : xe.max;
    const plotW = WIDTH - MARGIN.left - MARGIN.right;
    const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
    const sx = (x: number): number => MARGIN.left + ((x - xe.min) / (x1 - xe.min)) * plotW;
    const sy = (y: number): number => MARGIN.top + plotH - ((fy(y) - y0) / (y1 - y0)) * plotH;
    const axes = svg('g', { class: 'nbflow-axes' }, root);
    svg('rect', { x: MARGIN.left, y: MARGIN.top, width: plotW, height: plotH, class: 'nbflow-plot-bg' }, axes);
    const clipId = `nbflow-clip-${++clipCount}`;
    const clip = svg('clipPath', { id: clipId }, svg('defs', {}, root));
    svg('rect', { x: MARGIN.left, y: MARGIN.top, width: plotW, height: plotH }, clip);
    const yTicks = this.logScale
      ? ticks({ min: y0, max: y1 }, 4).map(t => Math.pow(10, t))
      : ticks({ min: ye.min, max: ye.max }, 4);
    for (const t of yTicks) {
      const y = sy(t);
      svg('line', { x1: MARGIN.left, x2: MARGIN.left + plotW, y1: y, y2: y, class: 'nbflow-grid' }, axes);
      svg('text', { x: MARGIN.left - 4, y: y + 4, 'text-anchor': 'end' }, axes).textContent = formatNumber(t);
    }
    for (const t of ticks({ min: xe.min, max: x1 }, 4)) {
      const x = sx(t);
      const label =
        this.axis === 'wall' ? formatWallTime(t, x1 - xe.min) : this.axis === 'relative' ? formatDuration(t) : formatNumber(t);
      svg('text', { x, y: HEIGHT - 10, 'text-anchor': 'middle', class: 'nbflow-x-tick' }, axes).textContent = label;
    }
    const plot = svg('g', { 'clip-path': `url(#${clipId})` }, root);
    for (const l of lines) {
      const color = this.colorOf(l.s.run);
      if (this.smoothing > 0) {
        this.polyline(plot, l.shown.xs, l.shown.raw, sx, sy, plotW, { class: 'nbflow-line-raw', stroke: color });
      }
      const main = this.polyline(plot, l.shown.xs, l.shown.smoothed, sx, sy, plotW, { class: 'nbflow-line', stroke: color });
      main.setAttribute('data-run', l.s.run);
      main.setAttribute('data-points', String(l.s.steps.length));
      title(main, `${runLabel(l.s.run, this.logdir)}: ${l.s.steps.length} points, last ${formatNumber(l.s.values[l.s.values.length - 1] ?? NaN)}`);
    }
    if (zoom) {
      box.dataset.zoomed = `${zoom.x.min},${zoom.x.max}`;
    }
    const invert = (px: number): number => xe.min + ((px - MARGIN.left) / plotW) * (x1 - xe.min);
    const invertY = (py: number): number => {
      const v = y0 + ((MARGIN.top + plotH - py) / plotH) * (y1 - y0);
      return this.logScale ? Math.pow(10, v) : v;
    };
    this.interact(tag, pinnedCopy ? `pinned:${tag}` : tag, box, root, lines, { sx, sy, invert, invertY, plotW, plotH });
    const legend = html('div', { class: 'nbflow-legend' }, box);
    for (const l of lines) {
      const item = html('span', { class: 'nbflow-legend-item' }, legend);
      html('span', { class: 'nbflow-swatch', style: `background:${this.colorOf(l.s.run)}` }, item);
      item.append(runLabel(l.s.run, this.logdir));
      item.setAttribute('data-run', l.s.run);
      title(item, `${l.s.steps.length} points`);
    }
    return box;
  }

  /**
   * The chart's pointer handling: the hover readout (crosshair, points, table) and drag to
   * zoom, double-click to zoom out. `lines` hold each run's whole series on the chart's axis.
   */
  private interact(
    tag: string,
    key: string,
    box: HTMLElement,
    root: SVGElement,
    lines: { s: ScalarSeries; xs: number[]; smoothed: (number | null)[]; raw: (number | null)[] }[],
    scale: {
      sx: (x: number) => number;
      sy: (y: number) => number;
      invert: (px: number) => number;
      invertY: (py: number) => number;
      plotW: number;
      plotH: number;
    }
  ): void {
    const { sx, sy, invert, invertY, plotW, plotH } = scale;
    const top = MARGIN.top;
    const hoverLayer = svg('g', { class: 'nbflow-hover', visibility: 'hidden' }, root);
    const clip = root.querySelector('g[clip-path]')?.getAttribute('clip-path');
    if (clip) {
      hoverLayer.setAttribute('clip-path', clip); // a point off a zoomed plot is not marked
    }
    const cross = svg('line', { class: 'nbflow-crosshair', y1: top, y2: top + plotH }, hoverLayer);
    const band = svg('rect', { class: 'nbflow-zoom-band', width: 0, height: 0, visibility: 'hidden' }, root);
    const overlay = svg('rect', { x: MARGIN.left, y: top, width: plotW, height: plotH, class: 'nbflow-plot-overlay' }, root);
    const readout = html('div', { class: 'nbflow-readout', hidden: '' }, box);
    const clampPx = (px: number): number => Math.min(MARGIN.left + plotW, Math.max(MARGIN.left, px));
    const pointer = (ev: MouseEvent): number => {
      const r = root.getBoundingClientRect();
      return clampPx(((ev.clientX - r.left) * WIDTH) / (r.width || WIDTH));
    };
    const pointerY = (ev: MouseEvent): number => {
      const r = root.getBoundingClientRect();
      const py = ((ev.clientY - r.top) * HEIGHT) / (r.height || HEIGHT);
      return Math.min(top + plotH, Math.max(top, py));
    };
    const hide = (): void => {
      hoverLayer.setAttribute('visibility', 'hidden');
      readout.hidden = true;
    };
    const show = (px: number): void => {
      const x = invert(px);
      const zoom = this.zoom.get(tag);
      const rows = lines
        .map(l => ({ l, r: readoutAt(l.s, l.xs, l.smoothed, x) }))
        .filter((e): e is { l: (typeof lines)[number]; r: Readout } => e.r !== null)
        .filter(e => !zoom || (e.r.x >= zoom.x.min && e.r.x <= zoom.x.max)); // runs off the zoomed span say nothing
      if (!rows.length) {
        hide();
        return;
      }
      hoverLayer.setAttribute('visibility', 'visible');
      cross.setAttribute('x1', px.toFixed(1));
      cross.setAttribute('x2', px.toFixed(1));
      hoverLayer.querySelectorAll('circle').forEach(c => c.remove());
      for (const { l, r } of rows) {
        const y = r.smoothed ?? r.value;
        if (y !== null && Number.isFinite(y)) {
          svg('circle', { cx: sx(r.x).toFixed(1), cy: sy(y).toFixed(1), r: 3.5, fill: this.colorOf(l.s.run), class: 'nbflow-hover-point' }, hoverLayer);
        }
      }
      readout.textContent = '';
      const table = html('table', {}, readout);
      const head = html('tr', {}, table);
      for (const h of ['', 'Run', 'Smoothed', 'Value', 'Step', 'Time', 'Relative']) {
        html('th', {}, head, h);
      }
      const fmt = (v: number | null): string => (v === null ? 'NaN' : formatNumber(v));
      for (const { l, r } of rows) {
        const tr = html('tr', { 'data-run': r.run, 'data-step': String(r.step), 'data-value': String(r.value) }, table);
        html('span', { class: 'nbflow-swatch', style: `background:${this.colorOf(l.s.run)}` }, html('td', {}, tr));
        html('td', {}, tr, runLabel(r.run, this.logdir));
        html('td', {}, tr, fmt(r.smoothed));
        html('td', {}, tr, fmt(r.value));
        html('td', {}, tr, String(r.step));
        html('td', {}, tr, formatWallTime(r.wallTime, 0));
        html('td', {}, tr, formatDuration(r.relative));
      }
      html('div', { class: 'nbflow-readout-hint' }, readout, this.zoom.has(tag) ? 'drag to zoom in · double-click to zoom out' : 'drag to zoom in');
      readout.hidden = false;
      // beside the pointer, on the side with room
      const scaleX = (root.getBoundingClientRect().width || WIDTH) / WIDTH;
      const left = root.getBoundingClientRect().left - box.getBoundingClientRect().left + px * scaleX;
      const flip = px > MARGIN.left + plotW / 2;
      readout.style.left = flip ? '' : `${left + 12}px`;
      readout.style.right = flip ? `${box.clientWidth - left + 12}px` : '';
      readout.style.top = `${top + 4}px`;
    };
    let dragFrom: { px: number; py: number } | null = null;
    overlay.addEventListener('mousemove', ev => {
      const px = pointer(ev);
      this.hover = { key, px };
      show(px);
      if (dragFrom !== null) {
        const py = pointerY(ev);
        const flat = Math.abs(py - dragFrom.py) < 4; // x only: the band spans the plot's height
        band.setAttribute('visibility', 'visible');
        band.setAttribute('x', Math.min(dragFrom.px, px).toFixed(1));
        band.setAttribute('width', Math.abs(px - dragFrom.px).toFixed(1));
        band.setAttribute('y', (flat ? top : Math.min(dragFrom.py, py)).toFixed(1));
        band.setAttribute('height', (flat ? plotH : Math.abs(py - dragFrom.py)).toFixed(1));
      }
    });
    overlay.addEventListener('mouseleave', () => {
      this.hover = null;
      hide();
    });
    overlay.addEventListener('mousedown', ev => {
      if (ev.button === 0) {
        dragFrom = { px: pointer(ev), py: pointerY(ev) };
        ev.preventDefault(); // no text selection while dragging
      }
    });
    const release = (ev: MouseEvent): void => {
      window.removeEventListener('mouseup', release);
      if (dragFrom === null) {
        return;
      }
      const from = dragFrom;
      dragFrom = null;
      band.setAttribute('visibility', 'hidden');
      const to = { px: pointer(ev), py: pointerY(ev) };
      if (Math.abs(to.px - from.px) >= 4) {
        const x = { min: invert(Math.min(from.px, to.px)), max: invert(Math.max(from.px, to.px)) };
        const flat = Math.abs(to.py - from.py) < 4;
        // screen y grows downwards: the box's lower edge is the range's minimum
        const y = flat ? undefined : { min: invertY(Math.max(from.py, to.py)), max: invertY(Math.min(from.py, to.py)) };
        this.zoom.set(tag, { x, y });
        this.render();
      }
    };
    overlay.addEventListener('mousedown', () => window.addEventListener('mouseup', release));
    overlay.addEventListener('dblclick', () => {
      if (this.zoom.delete(tag)) {
        this.render();
      }
    });
    if (this.hover?.key === key) {
      show(this.hover.px); // a live update redrew the chart under the pointer
    }
  }

  private polyline(
    root: SVGElement,
    xs: number[],
    ys: (number | null)[],
    sx: (x: number) => number,
    sy: (y: number) => number,
    width: number,
    attrs: Record<string, string>
  ): SVGPathElement {
    const keep = downsampleMinMax(xs, ys, Math.round(width * 2));
    let d = '';
    let pen = false;
    for (const i of keep) {
      const y = ys[i];
      if (y === null) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${sx(xs[i]).toFixed(1)},${sy(y).toFixed(1)}`;
      pen = true;
    }
    const path = svg('path', { d: d || 'M0,0', fill: 'none', ...attrs }, root);
    path.setAttribute('data-drawn', String(keep.length));
    return path;
  }
}
