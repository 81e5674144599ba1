/** Image summaries: one card per (run, tag) with a step slider. */
import type { ImageInfo } from '../api';
import { chartTitle, html } from './dom';

export interface ImageSeries {
  run: string;
  tag: string;
  steps: number[];
  values: ImageInfo[];
  nextOffset: number;
}

export type ImageLoader = (run: string, tag: string, index: number) => Promise<Blob>;

export class ImagesView {
  readonly node: HTMLElement;
  private cards = new Map<string, { slider: HTMLInputElement; img: HTMLImageElement; label: HTMLElement; follow: boolean; url: string }>();
  private series: ImageSeries[] = [];

  constructor(private load: ImageLoader) {
    this.node = html('div', { class: 'nbflow-images nbflow-charts' });
  }

  setData(series: ImageSeries[]): void {
    this.series = series;
    const keys = new Set(series.map(s => `${s.run}\u0000${s.tag}`));
    for (const [key, card] of [...this.cards]) {
      if (!keys.has(key)) {  // a deleted run, or another log directory: its card goes
        if (card.url) {
          URL.revokeObjectURL(card.url);
        }
        card.img.closest('.nbflow-image-card')?.remove();
        this.cards.delete(key);
      }
    }
    if (!series.length && !this.node.querySelector('.nbflow-empty')) {
      html('div', { class: 'nbflow-empty' }, this.node, 'No image summaries yet.');
    }
    for (const s of series) {
      const key = `${s.run}\u0000${s.tag}`;
      let card = this.cards.get(key);
      if (!card) {
        this.node.querySelector('.nbflow-empty')?.remove();
        const box = html('div', { class: 'nbflow-chart nbflow-image-card', 'data-tag': s.tag, 'data-run': s.run }, this.node);
        html('div', { class: 'nbflow-chart-title' }, box, chartTitle(s.tag, s.run));
        const img = html('img', { class: 'nbflow-image', alt: s.tag }, box);
        const slider = html('input', { type: 'range', min: '0', max: '0', value: '0', class: 'nbflow-step-slider' }, box);
        const label = html('div', { class: 'nbflow-step-label' }, box);
        const created = { slider, img, label, follow: true, url: '' };
        slider.addEventListener('input', () => {
          const cur = this.series.find(x => x.run === s.run && x.tag === s.tag)!;
          created.follow = Number(slider.value) === cur.values.length - 1;
          void this.show(cur, created, Number(slider.value));
        });
        this.cards.set(key, created);
        card = created;
      }
      const last = s.values.length - 1;
      card.slider.max = String(Math.max(0, last));
      if (card.follow && last >= 0 && Number(card.slider.value) !== last) {
        card.slider.value = String(last);
        void this.show(s, card, last);
      } else if (last >= 0 && !card.url) {
        void this.show(s, card, Number(card.slider.value));
      }
    }
  }

  private async show(
    s: ImageSeries,
    card: { img: HTMLImageElement; label: HTMLElement; url: string },
    position: number
  ): Promise<void> {
    const info = s.values[position];
    if (!info) {
      return;
    }
    const blob = await this.load(s.run, s.tag, info.index);
    if (!card.img.isConnected) {
      return; // the card went while the image loaded
    }
    if (card.url) {
      URL.revokeObjectURL(card.url);
    }
    card.url = URL.createObjectURL(blob);
    card.img.src = card.url;
    card.label.textContent = `step ${s.steps[position]} (${position + 1}/${s.values.length}) · ${info.width}×${info.height}`;
  }
}
