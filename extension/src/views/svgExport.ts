/**
 * Export of what an SVG view shows, as a standalone SVG file and as a PNG drawn from it.
 *
 * An SVG on the page takes its look from the page's style sheets (JupyterLab's theme, the
 * Board's CSS). A file has none, so the copy carries each element's computed paint and font
 * inline. The PNG is the same SVG drawn into a canvas (no second renderer to keep in step).
 */
import { svg } from './dom';

/** The style properties that decide how the graph's shapes and labels look. */
const PAINTED = [
  'fill', 'fill-opacity', 'stroke', 'stroke-width', 'stroke-dasharray', 'stroke-opacity', 'opacity',
  'font-family', 'font-size', 'font-weight', 'text-anchor', 'display', 'visibility'
];

/**
 * `source` as standalone SVG text of `width` x `height` pixels (its current pan and zoom), on
 * `background`; elements marked `data-export="skip"` (overlays such as a minimap) are left out.
 */
export function standaloneSvg(source: SVGSVGElement, width: number, height: number, background = '#ffffff'): string {
  const copy = source.cloneNode(true) as SVGSVGElement;
  const from = [source, ...source.querySelectorAll('*')];
  const to = [copy, ...copy.querySelectorAll('*')];
  from.forEach((el, i) => {
    const style = getComputedStyle(el);
    const inline = PAINTED.map(p => `${p}:${style.getPropertyValue(p)}`).filter(d => !d.endsWith(':'));
    (to[i] as SVGElement).setAttribute('style', inline.join(';'));
  });
  copy.querySelectorAll('[data-export="skip"]').forEach(el => el.remove());
  copy.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  copy.setAttribute('width', String(width));
  copy.setAttribute('height', String(height));
  copy.setAttribute('viewBox', `0 0 ${width} ${height}`);
  copy.removeAttribute('class');
  const bg = svg('rect', { width, height, fill: background });
  copy.insertBefore(bg, copy.firstChild);
  return new XMLSerializer().serializeToString(copy);
}

/** Draw SVG text into a canvas at `scale` and encode it as PNG. */
export async function svgToPng(text: string, width: number, height: number, scale = 2): Promise<Blob> {
  const url = URL.createObjectURL(new Blob([text], { type: 'image/svg+xml' }));
  try {
    const image = new Image();
    await new Promise<void>((resolve, reject) => {
      image.onload = () => resolve();
      image.onerror = () => reject(new Error('the exported SVG could not be drawn'));
      image.src = url;
    });
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round(height * scale);
    const ctx = canvas.getContext('2d')!;
    ctx.scale(scale, scale);
    ctx.drawImage(image, 0, 0, width, height);
    return await new Promise<Blob>((resolve, reject) =>
      canvas.toBlob(b => (b ? resolve(b) : reject(new Error('PNG encoding failed'))), 'image/png')
    );
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** Offer `blob` to the user as a download named `filename`. */
export function download(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
