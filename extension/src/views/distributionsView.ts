/**
 * TensorBoard's Distributions view: each step's histogram as its 0, 6.68, 15.87, 30.85, 50,
 * 69.15, 84.13, 93.32 and 100th percentiles (min, ±1.5σ, ±σ, ±0.5σ, median and max of a normal
 * distribution), drawn over steps as nested bands, darker towards the median, in the run's
 * colour (the Histograms view's colour for the same run).
 */
import { BASIS_POINTS, percentiles } from '../model/histogram';
import { extent, ticks } from '../model/series';
import { formatNumber, svg } from './dom';
import { HistogramSeries, HistogramsView } from './histogramsView';

const WIDTH = 420;
const HEIGHT = 240;
const MARGIN = { left: 50, right: 12, top: 10, bottom: 24 };

export class DistributionsView extends HistogramsView {
  protected kind = 'distribution';

  constructor() {
    super();
    this.node.className = 'nbflow-distributions';
  }

  protected draw(root: SVGSVGElement, s: HistogramSeries, color: string): void {
    const bands = s.values.map(h => percentiles(h, BASIS_POINTS));
    const ye = extent(bands.flat())!;
    const xe = extent(s.steps)!;
    const plotW = WIDTH - MARGIN.left - MARGIN.right;
    const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
    const ySpan = ye.max - ye.min || Math.abs(ye.max) || 1;
    const y0 = ye.max > ye.min ? ye.min : ye.min - ySpan / 2;
    const sx = (x: number): number => MARGIN.left + ((x - xe.min) / (xe.max - xe.min || 1)) * plotW;
    const sy = (y: number): number => MARGIN.top + plotH - ((y - y0) / ySpan) * plotH;
    for (const t of ticks({ min: y0, max: y0 + ySpan }, 4)) {
      svg('line', { x1: MARGIN.left, x2: MARGIN.left + plotW, y1: sy(t), y2: sy(t), class: 'nbflow-grid' }, root);
      svg('text', { x: MARGIN.left - 4, y: sy(t) + 4, 'text-anchor': 'end' }, root).textContent = formatNumber(t);
    }
    for (const t of ticks(xe.max > xe.min ? xe : { min: xe.min, max: xe.min + 1 }, 4)) {
      svg('text', { x: sx(t), y: HEIGHT - 6, 'text-anchor': 'middle' }, root).textContent = formatNumber(t);
    }
    const n = BASIS_POINTS.length;
    const at = (i: number, k: number): string => `${sx(s.steps[i]).toFixed(1)},${sy(bands[i][k]).toFixed(1)}`;
    for (let b = 0; b < Math.floor(n / 2); b++) {
      const upper = bands.map((_, i) => at(i, n - 1 - b));
      const lower = bands.map((_, i) => at(i, b)).reverse();
      const band = svg('path', { d: `M${upper.join('L')}L${lower.join('L')}Z`, class: 'nbflow-band', fill: color, 'fill-opacity': 0.15 + 0.15 * b }, root);
      band.setAttribute('data-band', `${BASIS_POINTS[b]}-${BASIS_POINTS[n - 1 - b]}`);
    }
    const median = bands.map((_, i) => at(i, Math.floor(n / 2)));
    svg('path', { d: `M${median.join('L')}`, class: 'nbflow-median', fill: 'none', stroke: color }, root);
  }
}
