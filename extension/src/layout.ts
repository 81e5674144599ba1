/**
 * Layout service for the graph view: one shared web worker; each request carries an id and
 * only the newest answer per caller is used. Falls back to the main thread when a worker
 * cannot be started (e.g. a restrictive Content-Security-Policy). The labextension loads the
 * worker as a webpack chunk next to this module; a host without one (the notebook widgets'
 * single-file bundle) installs its own way to start it with `setLayoutWorkerFactory`.
 */
import { computeLayout, LayoutRequest, LayoutResult } from './model/layout';

type Pending = { resolve: (r: LayoutResult) => void; reject: (e: Error) => void };

let worker: Worker | null | undefined;
const pending = new Map<number, Pending>();
let nextId = 1;
let createWorker = (): Worker => new Worker(new URL('./layout.worker.js', import.meta.url));

/** How to start the layout worker; call before the first layout. */
export function setLayoutWorkerFactory(factory: () => Worker): void {
  createWorker = factory;
  worker = undefined;
}

/** "worker" or "main-thread": where the last layout ran (shown in the view, for tests). */
export let layoutEngine = 'worker';

function getWorker(): Worker | null {
  if (worker !== undefined) {
    return worker;
  }
  try {
    worker = createWorker();
    worker.onmessage = (ev: MessageEvent<LayoutResult & { error?: string }>) => {
      const p = pending.get(ev.data.id);
      pending.delete(ev.data.id);
      if (p) {
        if (ev.data.error) {
          p.reject(new Error(ev.data.error));
        } else {
          p.resolve(ev.data);
        }
      }
    };
    worker.onerror = () => {
      worker?.terminate();
      worker = null;
      for (const [id, p] of pending) {
        pending.delete(id);
        p.reject(new Error('layout worker failed'));
      }
    };
  } catch {
    worker = null;
  }
  return worker;
}

export async function layoutGraph(request: Omit<LayoutRequest, 'id'>): Promise<LayoutResult> {
  const id = nextId++;
  const w = getWorker();
  if (w) {
    try {
      const result = await new Promise<LayoutResult>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        w.postMessage({ ...request, id });
      });
      layoutEngine = 'worker';
      return result;
    } catch {
      // fall through to the main thread
    }
  }
  layoutEngine = 'main-thread';
  return computeLayout({ ...request, id });
}
