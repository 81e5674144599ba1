/**
 * Layered layout of the visible graph with dagre, level by level: an expanded group's children
 * are laid out first and the group becomes one box of their size (see computeLayout).
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

/** Layouts with more nodes than this rank them by longest path (see layoutLevel). */
export const LARGE_LAYOUT = 150;
/** Room above an expanded group's children for its label, and around them. */
const CLUSTER_TOP = 24;

type Point = { x: number; y: number };
interface Level {
  width: number;
  height: number;
  boxes: Record<string, Box>;
  edges: Map<string, Point[]>;
}

/**
 * Hierarchical layout, as TensorBoard lays out its metanodes: each expanded group's children are
 * laid out on their own, and the group is then one box of that size among its siblings. Cheaper
 * than one compound layout (whose cost grows with every rank of every cluster), and an edge
 * between different groups is routed at the level of their common group, from and to the ops'
 * own borders.
 */
export function computeLayout(request: LayoutRequest): LayoutResult {
  const t0 = Date.now();
  const children = new Map<string, LayoutNode[]>();
  const byId = new Map(request.nodes.map(n => [n.id, n]));
  for (const n of request.nodes) {
    const list = children.get(n.parent) ?? [];
    list.push(n);
    children.set(n.parent, list);
  }
  const chain = (id: string): string[] => {
    const out: string[] = [];
    for (let p: string | undefined = id; p; p = byId.get(p)?.parent) {
      out.unshift(p);
    }
    return out;
  };
  // each edge is routed in the level of its endpoints' innermost common group
  const lifted = new Map<string, { src: string; dst: string; a: string; b: string }[]>();
  for (const e of request.edges) {
    const cs = chain(e.src);
    const cd = chain(e.dst);
    let i = 0;
    while (i < cs.length && i < cd.length && cs[i] === cd[i]) {
      i++;
    }
    if (i >= cs.length || i >= cd.length) {
      continue; // an edge into its own group: nothing to draw
    }
    const level = i === 0 ? '' : cs[i - 1];
    const list = lifted.get(level) ?? [];
    list.push({ src: e.src, dst: e.dst, a: cs[i], b: cd[i] });
    lifted.set(level, list);
  }
  const layoutLevel = (parent: string): Level => {
    const nodes = children.get(parent) ?? [];
    const inner = new Map<string, Level>();
    for (const n of nodes) {
      if (n.cluster) {
        inner.set(n.id, layoutLevel(n.id));
      }
    }
    const g = new dagre.graphlib.Graph({ multigraph: false });
    // network simplex gives the tidiest ranks but grows quickly with the number of ranks
    const ranker = nodes.length > LARGE_LAYOUT ? 'longest-path' : 'network-simplex';
    g.setGraph({ rankdir: 'TB', nodesep: 18, ranksep: 36, edgesep: 8, marginx: 16, marginy: 16, ranker });
    g.setDefaultEdgeLabel(() => ({}));
    for (const n of nodes) {
      const sub = inner.get(n.id);
      g.setNode(n.id, sub ? { width: Math.max(80, sub.width), height: sub.height + CLUSTER_TOP } : { width: n.width, height: n.height });
    }
    for (const e of lifted.get(parent) ?? []) {
      g.setEdge(e.a, e.b);
    }
    dagre.layout(g);
    const boxes: Record<string, Box> = {};
    const edges = new Map<string, Point[]>();
    for (const n of nodes) {
      const d = g.node(n.id) as { x: number; y: number; width: number; height: number };
      boxes[n.id] = { x: d.x, y: d.y, width: d.width, height: d.height };
      const sub = inner.get(n.id);
      if (sub) {
        const dx = d.x - d.width / 2 + (d.width - sub.width) / 2;
        const dy = d.y - d.height / 2 + CLUSTER_TOP;
        for (const [id, b] of Object.entries(sub.boxes)) {
          boxes[id] = { ...b, x: b.x + dx, y: b.y + dy };
        }
        for (const [key, points] of sub.edges) {
          edges.set(key, points.map(p => ({ x: p.x + dx, y: p.y + dy })));
        }
      }
    }
    for (const e of lifted.get(parent) ?? []) {
      const route = ((g.edge(e.a, e.b) as { points?: Point[] } | undefined)?.points ?? []).map(p => ({ x: p.x, y: p.y }));
      edges.set(`${e.src}\u0000${e.dst}`, route);
    }
    const label = g.graph() as { width?: number; height?: number };
    return { width: label.width ?? 0, height: label.height ?? 0, boxes, edges };
  };
  const top = layoutLevel('');
  const edges = request.edges.map(e => {
    let points = top.edges.get(`${e.src}\u0000${e.dst}`) ?? [];
    const s = top.boxes[e.src];
    const d = top.boxes[e.dst];
    if (points.length && s && d) {
      // a route between enclosing groups starts at the op's own bottom and ends at the other's top
      const first = points[0];
      const last = points[points.length - 1];
      const from = { x: s.x, y: s.y + s.height / 2 };
      const to = { x: d.x, y: d.y - d.height / 2 };
      points = [
        ...(Math.hypot(first.x - from.x, first.y - from.y) > 1 && byId.get(e.src)?.parent !== '' ? [from] : []),
        ...points,
        ...(Math.hypot(last.x - to.x, last.y - to.y) > 1 && byId.get(e.dst)?.parent !== '' ? [to] : [])
      ];
    }
    return { src: e.src, dst: e.dst, points };
  });
  return { id: request.id, boxes: top.boxes, edges, width: top.width, height: top.height, millis: Date.now() - t0 };
}
