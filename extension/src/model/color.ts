/**
 * Colour arithmetic for legible nodes: WCAG relative luminance and contrast ratio, tints, and
 * the text colour to put on a fill. Every node label must reach a contrast of at least 4.5:1
 * (WCAG AA for normal text) on whatever fill a colour scheme gives its node.
 */

export type Rgb = [number, number, number];

/** "#rrggbb", "#rgb" or "rgb(r, g, b)" as 0..255 channels. */
export function parseColor(color: string): Rgb {
  const c = color.trim();
  let m = /^#([0-9a-f]{6})$/i.exec(c);
  if (m) {
    const n = parseInt(m[1], 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }
  m = /^#([0-9a-f]{3})$/i.exec(c);
  if (m) {
    return [...m[1]].map(h => parseInt(h + h, 16)) as Rgb;
  }
  m = /^rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)/i.exec(c);
  if (m) {
    return [Number(m[1]), Number(m[2]), Number(m[3])];
  }
  throw new Error(`not a colour: ${color}`);
}

export function toHex([r, g, b]: Rgb): string {
  return '#' + [r, g, b].map(v => Math.round(Math.max(0, Math.min(255, v))).toString(16).padStart(2, '0')).join('');
}

/** WCAG 2 relative luminance, 0 (black) to 1 (white). */
export function luminance(color: string): number {
  const lin = (v: number): number => {
    const s = v / 255;
    return s <= 0.04045 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
  };
  const [r, g, b] = parseColor(color);
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** WCAG contrast ratio of two colours, 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

export const DARK_TEXT = '#000000'; // black or white: one of them always reaches 4.58:1
export const LIGHT_TEXT = '#ffffff';

/** The label colour for a fill: dark or white, whichever contrasts more (always >= 4.5:1). */
export function textColorOn(fill: string): string {
  return contrastRatio(DARK_TEXT, fill) >= contrastRatio(LIGHT_TEXT, fill) ? DARK_TEXT : LIGHT_TEXT;
}

/** `color` mixed with white: 0 keeps it, 1 is white. Pastel fills keep dark labels legible. */
export function tint(color: string, amount: number): string {
  const [r, g, b] = parseColor(color);
  const t = Math.max(0, Math.min(1, amount));
  return toHex([r + (255 - r) * t, g + (255 - g) * t, b + (255 - b) * t]);
}
