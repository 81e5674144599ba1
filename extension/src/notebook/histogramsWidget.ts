/**
 * The notebook's histograms over time (nbflow.notebook.widgets.histograms.HistogramsWidget):
 * the Board's HistogramsView (TensorBoard's "offset" view) and DistributionsView (percentile
 * bands) inside a cell output, one shown at a time. The kernel streams the histograms in the
 * Board's own JSON; re-binning and percentiles happen here, as in the Board. The shown view
 * (`mode`) is synced both ways with the Python object.
 */
import { KernelHistograms, fromKernelHistograms } from '../model/notebook';
import { DistributionsView } from '../views/distributionsView';
import { html } from '../views/dom';
import { HistogramsView } from '../views/histogramsView';
import { RenderProps, save } from './anywidget';

const MODES = [
  ['histograms', 'Histograms'],
  ['distributions', 'Distributions']
] as const;

function render({ model, el }: RenderProps): () => void {
  const node = html('div', { class: 'nbflow-notebook-histograms' }, el);
  const bar = html('div', { class: 'nbflow-toolbar nbflow-tabs' }, node);
  const views = { histograms: new HistogramsView(), distributions: new DistributionsView() };
  const buttons = MODES.map(([mode, label]) => {
    const b = html('button', { class: 'nbflow-tab', 'data-mode': mode }, bar, label);
    b.addEventListener('click', () => save(model, 'mode', mode));
    return b;
  });
  for (const view of Object.values(views)) {
    node.appendChild(view.node);
  }
  const showMode = (): void => {
    const mode = model.get('mode') as keyof typeof views;
    for (const [name, view] of Object.entries(views)) {
      view.node.style.display = name === mode ? '' : 'none';
    }
    for (const b of buttons) {
      b.classList.toggle('nbflow-tab-active', b.dataset.mode === mode);
    }
  };
  const showData = (): void => {
    const series = fromKernelHistograms(model.get('series') as KernelHistograms[]);
    views.histograms.setData(series);
    views.distributions.setData(series);
  };
  model.on('change:mode', showMode);
  model.on('change:series', showData);
  showMode();
  showData();
  return () => {
    model.off('change:mode', showMode);
    model.off('change:series', showData);
  };
}

export default { render };
