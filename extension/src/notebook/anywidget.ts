/**
 * What the notebook widgets need from anywidget's front-end model (the subset of its
 * AnyModel they use), and the page-level setup they share. No JupyterLab imports: the same
 * bundle runs in JupyterLab, Notebook 7 and VS Code.
 */
import { setLayoutWorkerFactory } from '../layout';

export interface AnyModel {
  get(name: string): any;
  set(name: string, value: unknown): void;
  save_changes(): void;
  on(event: string, callback: (...args: any[]) => void): void;
  off(event: string, callback: (...args: any[]) => void): void;
  send(content: unknown): void;
}

export interface RenderProps {
  model: AnyModel;
  el: HTMLElement;
}

/** Inlined by scripts/build-widgets.mjs: the layout worker's own bundle, as source text. */
declare const NBFLOW_LAYOUT_WORKER: string;

let workerInstalled = false;

/** Run graph layouts in a worker started from the inlined source (once per page). */
export function installLayoutWorker(): void {
  if (workerInstalled || typeof NBFLOW_LAYOUT_WORKER !== 'string') {
    return;
  }
  workerInstalled = true;
  const url = URL.createObjectURL(new Blob([NBFLOW_LAYOUT_WORKER], { type: 'text/javascript' }));
  setLayoutWorkerFactory(() => new Worker(url));
}

/** Set a synced trait from the front end and send it to the kernel. */
export function save(model: AnyModel, name: string, value: unknown): void {
  model.set(name, value);
  model.save_changes();
}
