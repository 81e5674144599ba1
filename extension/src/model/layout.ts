/**
 * Layered layout of the visible graph with dagre (compound: expanded groups are clusters).
 * Runs in a web worker (layout.worker.ts) so a large graph never blocks the page; the same
 * function runs on the main thread where workers are unavailable.
 */
import dagre from '@dagrejs/dagre';

export interface LayoutNode {
  id: string;
  width: number;
  height: number;
  /** Id of the enclosing cluster, "" at top level. */
  parent: string;
  cluster: boolean;
}

export interface LayoutRequest {
  id: number;
  nodes: LayoutNode[];
  edges: { src: string; dst: string }[];
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LayoutResult {
  id: number;
  boxes: Record<string, Box>;
  edges: { src: string; dst: string; points: { x: number; y: number }[] }[];
  width: number;
  height: number;
  millis: number;
}

/** Layouts with more nodes than this rank them by longest path (see computeLayout). */
export const LARGE_LAYOUT = 150;

export function computeLayout(request: LayoutRequest): LayoutResult {
  const t0 = Date.now();
  const g = new dagre.graphlib.Graph({ compound: true, multigraph: false });
  // network simplex gives the tidiest ranks but grows quickly with the number of ranks; above
  // LARGE_LAYOUT nodes the cheaper longest-path ranking keeps an expand within its time budget
  const ranker = request.nodes.length > LARGE_LAYOUT ? 'longest-path' : 'network-simplex';
  g.setGraph({ rankdir: 'TB', nodesep: 18, ranksep: 36, edgesep: 8, marginx: 16, marginy: 16, ranker });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of request.nodes) {
    g.setNode(n.id, n.cluster ? { paddingTop: 24 } : { width: n.width, height: n.height });
  }
  for (const n of request.nodes) {
    if (n.parent) {
      g.setParent(n.id, n.parent);
    }
  }
  for (const e of request.edges) {
    g.setEdge(e.src, e.dst);
  }
  dagre.layout(g);
  const boxes: Record<string, Box> = {};
  for (const id of g.nodes()) {
    const n = g.node(id) as { x: number; y: number; width: number; height: number };
    boxes[id] = { x: n.x, y: n.y, width: n.width, height: n.height };
  }
  const edges = g.edges().map(e => ({
    src: e.v,
    dst: e.w,
    points: ((g.edge(e) as { points?: { x: number; y: number }[] }).points ?? []).map(p => ({ x: p.x, y: p.y }))
  }));
  const label = g.graph() as { width?: number; height?: number };
  return {
    id: request.id,
    boxes,
    edges,
    width: label.width ?? 0,
    height: label.height ?? 0,
    millis: Date.now() - t0
  };
}
