/**
 * The graph view's minimap: the whole layout in miniature with the part on screen as a
 * rectangle. Clicking or dragging on it moves the view there (the point under the pointer
 * becomes the centre of the view).
 */
import { LayoutResult } from '../model/layout';
import { html, svg } from './dom';

/** The minimap's size in pixels (its longer side). */
const SIZE = 160;

export class Minimap {
  readonly node: HTMLElement;
  private readonly svgEl: SVGSVGElement;
  private readonly shapes: SVGGElement;
  private readonly frame: SVGRectElement;
  private scale = 1;
  private layout: LayoutResult | null = null;

  /** `pan(x, y)` is asked to centre the view on the layout point (x, y). */
  constructor(private readonly pan: (x: number, y: number) => void) {
    this.node = html('div', { class: 'nbflow-minimap', title: 'Click or drag to move the view' });
    this.svgEl = svg('svg', { class: 'nbflow-minimap-canvas' }, this.node);
    this.shapes = svg('g', {}, this.svgEl);
    this.frame = svg('rect', { class: 'nbflow-minimap-view' }, this.svgEl);
    let dragging = false;
    const move = (ev: PointerEvent): void => {
      const r = this.svgEl.getBoundingClientRect();
      this.pan((ev.clientX - r.left) / this.scale, (ev.clientY - r.top) / this.scale);
    };
    this.svgEl.addEventListener('pointerdown', ev => {
      ev.stopPropagation();
      dragging = true;
      this.svgEl.setPointerCapture?.(ev.pointerId);
      move(ev);
    });
    this.svgEl.addEventListener('pointermove', ev => dragging && move(ev));
    this.svgEl.addEventListener('pointerup', () => (dragging = false));
  }

  /** Draw the boxes of a new layout; `clusters` are drawn as outlines. */
  setLayout(layout: LayoutResult, clusters: ReadonlySet<string>): void {
    this.layout = layout;
    const w = Math.max(1, layout.width);
    const h = Math.max(1, layout.height);
    this.scale = SIZE / Math.max(w, h);
    this.svgEl.setAttribute('width', String(Math.ceil(w * this.scale)));
    this.svgEl.setAttribute('height', String(Math.ceil(h * this.scale)));
    this.shapes.textContent = '';
    const s = this.scale;
    for (const [id, b] of Object.entries(layout.boxes)) {
      svg('rect', {
        x: (b.x - b.width / 2) * s,
        y: (b.y - b.height / 2) * s,
        width: Math.max(1, b.width * s),
        height: Math.max(1, b.height * s),
        class: clusters.has(id) ? 'nbflow-minimap-cluster' : 'nbflow-minimap-node'
      }, this.shapes);
    }
  }

  /** Show where the view is: a canvas of `width` x `height` pixels under pan (x, y) and zoom k. */
  setViewport(t: { x: number; y: number; k: number }, width: number, height: number): void {
    if (!this.layout) {
      return;
    }
    const s = this.scale;
    this.frame.setAttribute('x', String((-t.x / t.k) * s));
    this.frame.setAttribute('y', String((-t.y / t.k) * s));
    this.frame.setAttribute('width', String((width / t.k) * s));
    this.frame.setAttribute('height', String((height / t.k) * s));
  }
}
