/**
 * The EEG view of a traced step (whitepaper §9.2): one row per device and thread, each op an
 * interval on a shared µs axis, tensor transfers (flow events) as arrows between rows; wheel
 * zooms the time axis, dragging pans it.
 */
import { Timeline, buildTimeline, TraceJson } from '../model/trace';
import { colorFor, formatNumber, html, svg, title } from './dom';

const ROW = 22;
const LABEL = 200;
const WIDTH = 900;

export class TimelineView {
  readonly node: HTMLElement;
  private timeline: Timeline | null = null;
  private view = { start: 0, end: 1 };
  private canvas: HTMLElement;
  readonly select: HTMLSelectElement;

  constructor() {
    this.node = html('div', { class: 'nbflow-timeline' });
    const bar = html('div', { class: 'nbflow-toolbar' }, this.node);
    html('label', {}, bar, 'Trace');
    this.select = html('select', { class: 'nbflow-trace-select' }, bar);
    const reset = html('button', { class: 'nbflow-button' }, bar, 'Reset zoom');
    reset.addEventListener('click', () => {
      if (this.timeline) {
        this.view = { start: this.timeline.start, end: this.timeline.end };
        this.render();
      }
    });
    this.canvas = html('div', { class: 'nbflow-timeline-canvas' }, this.node);
    html('div', { class: 'nbflow-empty' }, this.canvas, 'No traces in this log directory.');
  }

  setTraceOptions(options: string[]): void {
    const current = this.select.value;
    this.select.textContent = '';
    for (const o of options) {
      html('option', { value: o }, this.select, o);
    }
    if (options.includes(current)) {
      this.select.value = current;
    }
  }

  setTrace(trace: TraceJson): void {
    this.timeline = buildTimeline(trace);
    this.view = { start: this.timeline.start, end: Math.max(this.timeline.end, this.timeline.start + 1) };
    this.render();
  }

  private render(): void {
    const t = this.timeline;
    this.canvas.textContent = '';
    if (!t || !t.rows.length) {
      html('div', { class: 'nbflow-empty' }, this.canvas, 'This trace has no complete ("X") events.');
      return;
    }
    const height = 30 + t.rows.length * ROW;
    const root = svg('svg', { width: WIDTH, height, class: 'nbflow-eeg' });
    this.canvas.appendChild(root);
    const span = this.view.end - this.view.start || 1;
    const sx = (us: number): number => LABEL + ((us - this.view.start) / span) * (WIDTH - LABEL - 10);
    for (let i = 0; i <= 5; i++) {
      const us = this.view.start + (span * i) / 5;
      svg('line', { x1: sx(us), x2: sx(us), y1: 20, y2: height, class: 'nbflow-grid' }, root);
      const anchor = i === 0 ? 'start' : i === 5 ? 'end' : 'middle'; // the end labels stay inside
      svg('text', { x: sx(us), y: 14, 'text-anchor': anchor }, root).textContent = `${formatNumber(us - t.start)} µs`;
    }
    t.rows.forEach((row, r) => {
      const y = 24 + r * ROW;
      const g = svg('g', { class: 'nbflow-eeg-row', 'data-row': row.label }, root);
      const label = svg('text', { x: 4, y: y + 14, class: 'nbflow-eeg-label' }, g);
      label.textContent = row.label.length > 34 ? '…' + row.label.slice(-33) : row.label;
      title(label, row.label);
      for (const iv of row.intervals) {
        if (iv.start + iv.duration < this.view.start || iv.start > this.view.end) {
          continue;
        }
        const x = sx(iv.start);
        const rect = svg('rect', {
          x,
          y,
          width: Math.max(1, sx(iv.start + iv.duration) - x),
          height: ROW - 4,
          fill: colorFor(iv.op || iv.name),
          class: 'nbflow-eeg-op'
        }, g);
        title(rect, `${iv.name}${iv.op ? ` (${iv.op})` : ''}: ${iv.duration} µs at +${iv.start - t.start} µs`);
      }
    });
    const rowY = new Map(t.rows.map((row, r) => [row.key, 24 + r * ROW + (ROW - 4) / 2]));
    if (t.flows.length) {
      const defs = svg('defs', {}, root);
      const head = svg('marker', { id: 'nbflow-flow-head', viewBox: '0 0 8 8', refX: 8, refY: 4, markerWidth: 7, markerHeight: 7, orient: 'auto' }, defs);
      svg('path', { d: 'M0,0L8,4L0,8Z', class: 'nbflow-eeg-flow-head' }, head);
    }
    for (const f of t.flows) {
      if (Math.max(f.fromTs, f.toTs) < this.view.start || Math.min(f.fromTs, f.toTs) > this.view.end) {
        continue;
      }
      const arrow = svg('line', {
        x1: sx(f.fromTs),
        y1: rowY.get(f.fromRow)!,
        x2: sx(f.toTs),
        y2: rowY.get(f.toRow)!,
        class: 'nbflow-eeg-flow',
        'marker-end': 'url(#nbflow-flow-head)'
      }, root);
      title(arrow, `${f.name}: ${f.toTs - f.fromTs} µs`);
    }
    root.addEventListener('wheel', ev => {
      ev.preventDefault();
      const rect = root.getBoundingClientRect();
      const f = Math.exp(ev.deltaY * 0.002);
      const at = this.view.start + ((ev.clientX - rect.left - LABEL) / (WIDTH - LABEL - 10)) * span;
      this.view = { start: at - (at - this.view.start) * f, end: at + (this.view.end - at) * f };
      this.render();
    }, { passive: false });
  }
}
