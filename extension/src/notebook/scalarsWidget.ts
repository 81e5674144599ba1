/**
 * The notebook's scalar charts (nbflow.notebook.widgets.scalars.ScalarsWidget): the Board's
 * ScalarsView inside a cell output. The kernel streams the series (raw points: smoothing and
 * downsampling happen here, as in the Board); the smoothing weight and the x axis are synced
 * both ways with the Python object.
 */
import { KernelSeries, fromKernelSeries } from '../model/notebook';
import { XAxis } from '../model/series';
import { ScalarsView } from '../views/scalarsView';
import { RenderProps, save } from './anywidget';

function render({ model, el }: RenderProps): () => void {
  const view = new ScalarsView({
    smoothing: weight => save(model, 'smoothing', weight),
    axis: axis => save(model, 'x_axis', axis)
  });
  el.appendChild(view.node);
  view.node.classList.add('nbflow-notebook-scalars');
  const showOptions = (): void =>
    view.setOptions({ smoothing: model.get('smoothing'), axis: model.get('x_axis') as XAxis });
  const showData = (): void => {
    const series = model.get('series') as KernelSeries[];
    view.setData(fromKernelSeries(series), [...new Set(series.map(s => s.run))].sort());
  };
  model.on('change:smoothing', showOptions);
  model.on('change:x_axis', showOptions);
  model.on('change:series', showData);
  showOptions();
  showData();
  return () => {
    model.off('change:smoothing', showOptions);
    model.off('change:x_axis', showOptions);
    model.off('change:series', showData);
  };
}

export default { render };
