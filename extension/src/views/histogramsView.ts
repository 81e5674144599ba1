/**
 * Histograms over steps, two ways as in TensorBoard: "offset" stacks each step's histogram
 * (later steps in front), "distribution" draws percentile bands over steps.
 */
import { BASIS_POINTS, HistogramValue, percentiles, rebin } from '../model/histogram';
import { extent } from '../model/series';
import { formatNumber, html, svg } from './dom';

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
  private mode: 'offset' | 'distribution' = 'offset';
  private charts: HTMLElement;

  constructor() {
    this.node = html('div', { class: 'nbflow-histograms' });
    const bar = html('div', { class: 'nbflow-toolbar' }, this.node);
    const mode = html('select', { class: 'nbflow-histogram-mode' }, bar);
    for (const m of ['offset', 'distribution']) {
      html('option', { value: m }, mode, m);
    }
    mode.addEventListener('change', () => {
      this.mode = mode.value as 'offset' | 'distribution';
      this.render();
    });
    this.charts = html('div', { class: 'nbflow-charts' }, this.node);
  }

  setData(series: HistogramSeries[]): void {
    this.series = series;
    this.render();
  }

  render(): void {
    this.charts.textContent = '';
    if (!this.series.length) {
      html('div', { class: 'nbflow-empty' }, this.charts, 'No histogram summaries yet.');
    }
    for (const s of this.series) {
      const box = html('div', { class: 'nbflow-chart', 'data-tag': s.tag, 'data-run': s.run }, this.charts);
      html('div', { class: 'nbflow-chart-title' }, box, `${s.tag} · ${s.run}`);
      const root = svg('svg', { width: WIDTH, height: HEIGHT, viewBox: `0 0 ${WIDTH} ${HEIGHT}` });
      box.appendChild(root);
      if (s.values.length) {
        if (this.mode === 'offset') {
          this.drawOffset(root, s);
        } else {
          this.drawDistribution(root, s);
        }
      }
    }
  }

  private drawOffset(root: SVGSVGElement, s: HistogramSeries): void {
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
      svg('path', { d, class: 'nbflow-hist-row', fill: `hsl(25, 80%, ${80 - 40 * t}%)` }, root);
    });
    svg('text', { x: left, y: HEIGHT - 4 }, root).textContent = formatNumber(lo);
    svg('text', { x: left + plotW, y: HEIGHT - 4, 'text-anchor': 'end' }, root).textContent = formatNumber(hi);
    svg('text', { x: WIDTH - 4, y: 60 + (rows.length - 1) * rowGap, 'text-anchor': 'end' }, root).textContent = `step ${picked[picked.length - 1].step}`;
  }

  private drawDistribution(root: SVGSVGElement, s: HistogramSeries): void {
    const bands = s.values.map(h => percentiles(h, BASIS_POINTS));
    const ye = extent(bands.flat())!;
    const xe = extent(s.steps)!;
    const left = 50;
    const plotW = WIDTH - left - 10;
    const plotH = HEIGHT - 40;
    const sx = (x: number): number => left + ((x - xe.min) / (xe.max - xe.min || 1)) * plotW;
    const sy = (y: number): number => 10 + plotH - ((y - ye.min) / (ye.max - ye.min || 1)) * plotH;
    const n = BASIS_POINTS.length;
    for (let b = 0; b < Math.floor(n / 2); b++) {
      const upper = bands.map((p, i) => `${sx(s.steps[i]).toFixed(1)},${sy(p[n - 1 - b]).toFixed(1)}`);
      const lower = bands.map((p, i) => `${sx(s.steps[i]).toFixed(1)},${sy(p[b]).toFixed(1)}`).reverse();
      svg('path', { d: `M${upper.join('L')}L${lower.join('L')}Z`, class: 'nbflow-band', 'fill-opacity': 0.15 + 0.15 * b }, root);
    }
    const median = bands.map((p, i) => `${sx(s.steps[i]).toFixed(1)},${sy(p[Math.floor(n / 2)]).toFixed(1)}`);
    svg('path', { d: `M${median.join('L')}`, class: 'nbflow-median', fill: 'none' }, root);
    svg('text', { x: left - 4, y: 14, 'text-anchor': 'end' }, root).textContent = formatNumber(ye.max);
    svg('text', { x: left - 4, y: plotH + 10, 'text-anchor': 'end' }, root).textContent = formatNumber(ye.min);
  }
}
