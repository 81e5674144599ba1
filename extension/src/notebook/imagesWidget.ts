/**
 * The notebook's image summaries (nbflow.notebook.widgets.images.ImagesWidget): the Board's
 * ImagesView inside a cell output. The kernel streams each series' image sizes (the JSON of the
 * Board's images route); the view asks for the bytes of the image it shows with a message, and
 * the kernel answers with them as a binary buffer (what the Board's image route serves).
 */
import { ImageSeries, ImagesView } from '../views/imagesView';
import { RenderProps } from './anywidget';

interface KernelImages {
  run: string;
  tag: string;
  steps: number[];
  wall_times: number[];
  values: { index: number; width: number; height: number }[];
}

interface Reply {
  type?: string;
  request?: number;
  error?: string;
}

function render({ model, el }: RenderProps): () => void {
  const pending = new Map<number, { resolve: (b: Blob) => void; reject: (e: Error) => void }>();
  let requests = 0;
  const view = new ImagesView(
    (run, tag, index) =>
      new Promise<Blob>((resolve, reject) => {
        const request = ++requests;
        pending.set(request, { resolve, reject });
        model.send({ type: 'image', request, run, tag, index });
      })
  );
  view.node.classList.add('nbflow-notebook-images');
  el.appendChild(view.node);
  const onMessage = (msg: Reply, buffers?: (DataView | ArrayBuffer)[]): void => {
    const waiting = msg && msg.type === 'image' && msg.request !== undefined ? pending.get(msg.request) : undefined;
    if (!waiting) {
      return;
    }
    pending.delete(msg.request!);
    if (msg.error || !buffers || !buffers.length) {
      waiting.reject(new Error(msg.error ?? 'no image bytes'));
    } else {
      waiting.resolve(new Blob([buffers[0]]));
    }
  };
  const showData = (): void => {
    const series: ImageSeries[] = (model.get('series') as KernelImages[]).map(s => ({
      run: s.run,
      tag: s.tag,
      steps: s.steps,
      values: s.values,
      nextOffset: s.steps.length
    }));
    view.setData(series);
  };
  model.on('msg:custom', onMessage);
  model.on('change:series', showData);
  showData();
  return () => {
    model.off('msg:custom', onMessage);
    model.off('change:series', showData);
  };
}

export default { render };
