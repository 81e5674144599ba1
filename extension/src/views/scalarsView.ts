/**
 * Scalar charts: one chart per tag, the shown runs overlaid in their colours; smoothing (on the
 * full series, before downsampling to the chart's width), step / relative / wall-time axes,
 * log scale, TensorBoard's outlier-aware y range, a tag filter and CSV download. Which runs
 * are shown and their colours come from the host (the Board's runs table); alone (the
 * notebook widget) every run is shown, coloured in order of appearance.
 */
import { RunColors } from '../model/runs';
import {
  ScalarSeries,
  XAxis,
  downsampleMinMax,
  extent,
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
  }

  /** Set the smoothing weight and the x axis from outside (the toolbar follows). */
  setOptions(options: { smoothing?: number; axis?: XAxis }): void {
    if (options.smoothing !== undefined) {
      this.smoothing = options.smoothing;
      this.smoothingInput.value = String(options.smoothing);
      this.smoothingShown.textContent = String(options.smoothing);
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
    for (const tag of [...byTag.keys()].sort()) {
      this.charts.appendChild(this.chart(tag, byTag.get(tag)!));
    }
  }

  private chart(tag: string, series: ScalarSeries[]): HTMLElement {
    const box = html('div', { class: 'nbflow-chart', 'data-tag': tag });
    html('div', { class: 'nbflow-chart-title' }, box, tag);
    const root = svg('svg', { width: WIDTH, height: HEIGHT, viewBox: `0 0 ${WIDTH} ${HEIGHT}` });
    box.appendChild(root);
    const lines = series.map(s => {
      const xs = xValues(s, this.axis);
      const raw = s.values.map(v => (this.logScale && v !== null && v <= 0 ? null : v));
      return { s, xs, raw, smoothed: smooth(raw, this.smoothing) };
    });
    const xe = extent(lines.flatMap(l => l.xs));
    // as TensorBoard: with smoothing on, the faint raw lines do not stretch the y axis
    const drawn = lines.flatMap(l => (this.smoothing > 0 ? l.smoothed : l.raw));
    const ye = yDomain(drawn, { ignoreOutliers: this.ignoreOutliers, log: this.logScale });
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
        this.polyline(plot, l.xs, l.raw, sx, sy, plotW, { class: 'nbflow-line-raw', stroke: color });
      }
      const main = this.polyline(plot, l.xs, l.smoothed, sx, sy, plotW, { class: 'nbflow-line', stroke: color });
      main.setAttribute('data-run', l.s.run);
      main.setAttribute('data-points', String(l.s.steps.length));
      title(main, `${runLabel(l.s.run, this.logdir)}: ${l.s.steps.length} points, last ${formatNumber(l.s.values[l.s.values.length - 1] ?? NaN)}`);
    }
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
