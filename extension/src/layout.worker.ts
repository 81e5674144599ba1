/** Web worker: lays out graphs off the main thread (see model/layout.ts). */
import { computeLayout, LayoutRequest } from './model/layout';

const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<LayoutRequest>) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = (ev: MessageEvent<LayoutRequest>) => {
  try {
    scope.postMessage(computeLayout(ev.data));
  } catch (err) {
    scope.postMessage({ id: ev.data.id, error: String(err) });
  }
};
