/**
 * Pan and zoom of the graph view's canvas: dragging moves the drawing, the wheel zooms about the
 * pointer, `fit` shows a whole layout (or, when it would be illegibly small, its top at a
 * readable scale), `panTo` and `centerOn` bring a point into the middle. The view is one
 * transform (translate, then scale) on the SVG group that holds the drawing; every change is
 * reported (the minimap draws the visible part as a frame).
 *
 * The canvas's size comes from a ResizeObserver, not from asking the page: getBoundingClientRect
 * makes the browser lay out every SVG element changed since the last frame there and then (after
 * an expand, hundreds of new nodes), and again at the next frame after the next change.
 */

/** A view transform: screen = layout * k + (x, y). */
export interface Transform {
  x: number;
  y: number;
  k: number;
}

/** Fit never shrinks below this scale: a large graph is shown legibly from its top instead. */
const MIN_FIT_SCALE = 0.6;

export class PanZoom {
  transform: Transform = { x: 0, y: 0, k: 1 };
  /** The canvas's size, as the ResizeObserver last reported it (null before its first report). */
  private canvas: { width: number; height: number } | null = null;

  /** `changed(t, width, height)` hears every new transform with the canvas's size. */
  constructor(
    private readonly svgEl: SVGSVGElement,
    private readonly viewport: SVGGElement,
    private readonly changed: (t: Transform, width: number, height: number) => void
  ) {
    let drag: { x: number; y: number } | null = null;
    svgEl.addEventListener('pointerdown', ev => {
      drag = { x: ev.clientX, y: ev.clientY };
    });
    svgEl.addEventListener('pointermove', ev => {
      if (drag && ev.buttons) {
        this.transform.x += ev.clientX - drag.x;
        this.transform.y += ev.clientY - drag.y;
        drag = { x: ev.clientX, y: ev.clientY };
        this.apply();
      }
    });
    svgEl.addEventListener('pointerup', () => (drag = null));
    svgEl.addEventListener('wheel', ev => {
      ev.preventDefault();
      const rect = svgEl.getBoundingClientRect();
      const px = ev.clientX - rect.left;
      const py = ev.clientY - rect.top;
      const factor = Math.exp(-ev.deltaY * 0.0015);
      const k = Math.max(0.02, Math.min(8, this.transform.k * factor));
      const f = k / this.transform.k;
      this.transform = { x: px - (px - this.transform.x) * f, y: py - (py - this.transform.y) * f, k };
      this.apply();
    }, { passive: false });
    if (typeof ResizeObserver !== 'undefined') {
      new ResizeObserver(entries => {
        const box = entries[entries.length - 1].contentRect;
        const first = !this.canvas;
        this.canvas = { width: box.width, height: box.height };
        if (first) {
          this.apply(); // the minimap's frame, now that the size is known
        }
      }).observe(svgEl);
    }
  }

  /** The canvas's size in pixels; asks the page only before the ResizeObserver's first report. */
  size(): { width: number; height: number } {
    if (!this.canvas) {
      const rect = this.svgEl.getBoundingClientRect();
      return { width: rect.width, height: rect.height };
    }
    return this.canvas;
  }

  /** Scale and centre a layout of this size into the view. */
  fit(layout: { width: number; height: number }): void {
    const rect = this.size();
    if (!rect.width || !rect.height) {
      return;
    }
    const whole = Math.min(1.5, rect.width / (layout.width + 20), rect.height / (layout.height + 20));
    const k = Math.max(MIN_FIT_SCALE, whole);
    // too big to show whole at a legible size: centre it across, start from its top
    const x = (rect.width - layout.width * k) / 2;
    const y = whole < MIN_FIT_SCALE ? 10 : Math.max(0, (rect.height - layout.height * k) / 2);
    this.transform = { k, x, y };
    this.apply();
  }

  /** Centre the view on the layout point (x, y) at zoom `k` (the current one by default). */
  panTo(x: number, y: number, k = this.transform.k): void {
    const rect = this.size();
    this.transform = { k, x: rect.width / 2 - x * k, y: rect.height / 2 - y * k };
    this.apply();
  }

  /** Set the drawing's transform and report it. */
  apply(): void {
    const t = this.transform;
    this.viewport.setAttribute('transform', `translate(${t.x},${t.y}) scale(${t.k})`);
    const rect = this.size();
    this.changed(t, rect.width, rect.height);
  }
}
