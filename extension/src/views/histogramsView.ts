/**
 * Histograms over steps, as TensorBoard's "offset" view: each step's histogram stacked, later
 * steps in front and in the run's full colour, earlier ones fading towards white. The
 * Distributions view (distributionsView.ts) draws the same series as percentile bands, in the
 * same colours. Run colours and which runs are shown come from the Board's runs table.
 */
import { HistogramValue, rebin } from '../model/histogram';
import { tint } from '../model/color';
import { RunColors } from '../model/runs';
import { chartTitle, formatNumber, html, svg } from './dom';

export interface HistogramSeries {
  run: string;
  tag: string;
  steps: number[];
  values: HistogramValue[];
  nextOffset: number;
}

const WIDTH = 420;
const HEIGHT = 240;

export class HistogramsView {
  readonly node: HTMLElement;
  private series: HistogramSeries[] = [];
  private charts: HTMLElement;
  private ownColors = new RunColors();
  protected colorOf: (run: string) => string = run => this.ownColors.color(run);
  protected isShown: (run: string) => boolean = () => true;
  protected kind = 'histogram';

  constructor() {
    this.node = html('div', { class: `nbflow-${this.kind}s` });
    this.charts = html('div', { class: 'nbflow-charts' }, this.node);
  }

  setData(series: HistogramSeries[]): void {
    this.series = series;
    this.render();
  }

  setRunStyle(color: (run: string) => string, isShown: (run: string) => boolean): void {
    this.colorOf = color;
    this.isShown = isShown;
    this.render();
  }

  render(): void {
    this.charts.textContent = '';
    const shown = this.series.filter(s => this.isShown(s.run));
    if (!shown.length) {
      html('div', { class: 'nbflow-empty' }, this.charts, `No ${this.kind} summaries of shown runs yet.`);
    }
    const byTag = [...shown].sort((a, b) => a.tag.localeCompare(b.tag));
    for (const s of byTag) {
      const box = html('div', { class: 'nbflow-chart', 'data-tag': s.tag, 'data-run': s.run }, this.charts);
      const head = html('div', { class: 'nbflow-chart-title' }, box);
      html('span', { class: 'nbflow-swatch', style: `background:${this.colorOf(s.run)}` }, head);
      head.append(chartTitle(s.tag, s.run));
      const root = svg('svg', { width: WIDTH, height: HEIGHT, viewBox: `0 0 ${WIDTH} ${HEIGHT}` });
      box.appendChild(root);
      if (s.values.length) {
        this.draw(root, s, this.colorOf(s.run));
      }
    }
  }

  protected draw(root: SVGSVGElement, s: HistogramSeries, color: string): void {
    const stride = Math.max(1, Math.ceil(s.values.length / 30));
    const picked = s.values.map((h, i) => ({ h, step: s.steps[i] })).filter((_, i) => i % stride === 0 || i === s.values.length - 1);
    const min = Math.min(...picked.map(p => p.h.min));
    const max = Math.max(...picked.map(p => p.h.max));
    const pad = max > min ? 0 : Math.abs(min) * 0.1 || 1; // a constant tensor: centre its spike
    const lo = min - pad;
    const hi = max + pad;
    const bins = 40;
    const rows = picked.map(p => rebin(p.h, lo, hi, bins));
    const peak = Math.max(1e-12, ...rows.flat());
    const left = 40;
    const plotW = WIDTH - left - 60;
    const rowGap = (HEIGHT - 80) / Math.max(1, rows.length - 1);
    rows.forEach((counts, r) => {
      const base = 60 + r * rowGap;
      let d = `M${left},${base}`;
      counts.forEach((c, i) => {
        d += `L${(left + ((i + 0.5) / bins) * plotW).toFixed(1)},${(base - (c / peak) * 55).toFixed(1)}`;
      });
      d += `L${left + plotW},${base}Z`;
      const t = r / Math.max(1, rows.length - 1);
      svg('path', { d, class: 'nbflow-hist-row', fill: tint(color, 0.75 * (1 - t)), stroke: color }, root);
    });
    svg('text', { x: left, y: HEIGHT - 4 }, root).textContent = formatNumber(lo);
    svg('text', { x: left + plotW, y: HEIGHT - 4, 'text-anchor': 'end' }, root).textContent = formatNumber(hi);
    svg('text', { x: WIDTH - 4, y: 60 + (rows.length - 1) * rowGap, 'text-anchor': 'end' }, root).textContent = `step ${picked[picked.length - 1].step}`;
  }
}
