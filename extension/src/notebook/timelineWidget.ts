/**
 * The notebook's step timeline (nbflow.notebook.widgets.timeline.TimelineWidget): the Board's
 * TimelineView inside a cell output. The kernel sends one Chrome trace, the JSON the Board's
 * trace route serves; rows, intervals and zoom are the view's.
 */
import { TraceJson } from '../model/trace';
import { TimelineView } from '../views/timelineView';
import { RenderProps } from './anywidget';

function render({ model, el }: RenderProps): () => void {
  const view = new TimelineView();
  view.node.classList.add('nbflow-notebook-timeline');
  el.appendChild(view.node);
  const show = (): void => {
    view.setTraceOptions([model.get('name') as string]);
    view.setTrace(model.get('trace') as TraceJson);
  };
  model.on('change:trace', show);
  model.on('change:name', show);
  show();
  return () => {
    model.off('change:trace', show);
    model.off('change:name', show);
  };
}

export default { render };
