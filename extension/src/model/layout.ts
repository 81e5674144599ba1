/**
 * Layered layout of the visible graph with dagre, level by level: an expanded group's children
 * are laid out first and the group becomes one box of their size (see computeLayout).
 * Runs in a web worker (layout.worker.ts) so a large graph never blocks the page; the same
 * function runs on the main thread where workers are unavailable.
 *
 * Two things keep expanding a group cheap on a 10,000-op graph:
 * - each level's layout is remembered, keyed by everything it depends on (its nodes' ids and
 *   sizes, its edges, and the layouts of the expanded groups inside it), so a new request lays
 *   out only the levels that changed: after an expand, the opened group and the levels around
 *   it; after a collapse, usually none (levelCache);
 * - a level that is one chain (a -> b -> c ..., the shape of a layer's ops or of an unrolled
 *   loop) is placed as the column dagre would draw, in time linear in its length, instead of
 *   dagre's ranking, ordering and positioning passes, which take hundreds of milliseconds on a
 *   chain of a few hundred ops (chainLevel).
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

/** dagre's spacing, shared with the chain placement so both draw the same. */
const SPACING = { rankdir: 'TB', nodesep: 18, ranksep: 36, edgesep: 8, marginx: 16, marginy: 16 };

type Point = { x: number; y: number };
/** One level laid out: its nodes' boxes (and, offset, those inside its expanded groups). */
interface Level {
  width: number;
  height: number;
  boxes: Record<string, Box>;
  /** Routes by `src\u0000dst` of the original edges drawn in this level or inside it. */
  edges: Map<string, Point[]>;
}

/**
 * The levels laid out lately, by key (see levelKey), least recently used first. A level holds
 * the boxes of everything inside it, so the cache is bounded by boxes, not levels: past
 * LEVEL_CACHE_BOXES the least recently used levels go.
 */
const levelCache = new Map<string, Level>();
const LEVEL_CACHE_BOXES = 200_000;
let cachedBoxes = 0;

function remember(key: string, level: Level): void {
  levelCache.set(key, level);
  cachedBoxes += Object.keys(level.boxes).length;
  for (const [oldest, dropped] of levelCache) {
    if (cachedBoxes <= LEVEL_CACHE_BOXES || oldest === key) {
      break;
    }
    levelCache.delete(oldest);
    cachedBoxes -= Object.keys(dropped.boxes).length;
  }
}

/**
 * The column dagre draws for a chain: when the level's edges link its nodes into one path, each
 * node in its own rank, centred on one vertical line, `ranksep` apart, and each edge a straight
 * route from the bottom of one to the top of the next through their midpoint. Null when the
 * level is not one chain (a fork, a join, a cycle, a node apart), which dagre then lays out.
 */
export function chainLevel(
  sizes: Map<string, { width: number; height: number }>,
  edges: { a: string; b: string }[]
): { width: number; height: number; boxes: Record<string, Box>; routes: Map<string, Point[]> } | null {
  const next = new Map<string, string>();
  const hasPrev = new Set<string>();
  for (const { a, b } of edges) {
    if (next.get(a) === b) {
      continue; // a second edge between the same two nodes: dagre draws one
    }
    if (next.has(a) || hasPrev.has(b) || a === b) {
      return null;
    }
    next.set(a, b);
    hasPrev.add(b);
  }
  if (sizes.size === 0 || next.size !== sizes.size - 1) {
    return null;
  }
  const heads = [...sizes.keys()].filter(id => !hasPrev.has(id));
  if (heads.length !== 1) {
    return null;
  }
  const order: string[] = [];
  for (let id: string | undefined = heads[0]; id !== undefined; id = next.get(id)) {
    order.push(id);
    if (order.length > sizes.size) {
      return null;
    }
  }
  if (order.length !== sizes.size) {
    return null;
  }
  const widest = Math.max(...order.map(id => sizes.get(id)!.width));
  const x = SPACING.marginx + widest / 2;
  const boxes: Record<string, Box> = {};
  let top = SPACING.marginy;
  for (const id of order) {
    const { width, height } = sizes.get(id)!;
    boxes[id] = { x, y: top + height / 2, width, height };
    top += height + SPACING.ranksep;
  }
  const routes = new Map<string, Point[]>();
  for (let i = 0; i + 1 < order.length; i++) {
    const s = boxes[order[i]];
    const d = boxes[order[i + 1]];
    const from = s.y + s.height / 2;
    const to = d.y - d.height / 2;
    routes.set(`${order[i]}\u0000${order[i + 1]}`, [{ x, y: from }, { x, y: (from + to) / 2 }, { x, y: to }]);
  }
  const height = top - SPACING.ranksep + SPACING.marginy;
  return { width: widest + 2 * SPACING.marginx, height, boxes, routes };
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
  /** A level's key: its nodes with their sizes (an expanded group by its own key), its edges. */
  const keys = new Map<string, string>();
  const levelKey = (parent: string): string => {
    const parts: string[] = [];
    for (const n of children.get(parent) ?? []) {
      parts.push(n.cluster ? `${n.id}\u0001[${levelKey(n.id)}]` : `${n.id}\u0001${n.width}\u0001${n.height}`);
    }
    parts.push('\u0002');
    for (const e of lifted.get(parent) ?? []) {
      parts.push(`${e.src}\u0001${e.dst}\u0001${e.a}\u0001${e.b}`);
    }
    const key = parts.join('\u0003');
    keys.set(parent, key);
    return key;
  };
  levelKey('');
  const layoutLevel = (parent: string): Level => {
    const key = keys.get(parent)!;
    const known = levelCache.get(key);
    if (known) {
      levelCache.delete(key); // most recently used last
      levelCache.set(key, known);
      return known;
    }
    const nodes = children.get(parent) ?? [];
    const inner = new Map<string, Level>();
    for (const n of nodes) {
      if (n.cluster) {
        inner.set(n.id, layoutLevel(n.id));
      }
    }
    const sizes = new Map<string, { width: number; height: number }>();
    for (const n of nodes) {
      const sub = inner.get(n.id);
      sizes.set(n.id, sub ? { width: Math.max(80, sub.width), height: sub.height + CLUSTER_TOP } : { width: n.width, height: n.height });
    }
    const levelEdges = lifted.get(parent) ?? [];
    const placed = chainLevel(sizes, levelEdges) ?? dagreLevel(sizes, levelEdges, nodes.length > LARGE_LAYOUT);
    const boxes: Record<string, Box> = {};
    const edges = new Map<string, Point[]>();
    for (const n of nodes) {
      const d = placed.boxes[n.id];
      boxes[n.id] = d;
      const sub = inner.get(n.id);
      if (sub) {
        const dx = d.x - d.width / 2 + (d.width - sub.width) / 2;
        const dy = d.y - d.height / 2 + CLUSTER_TOP;
        for (const [id, b] of Object.entries(sub.boxes)) {
          boxes[id] = { ...b, x: b.x + dx, y: b.y + dy };
        }
        for (const [k, points] of sub.edges) {
          edges.set(k, points.map(p => ({ x: p.x + dx, y: p.y + dy })));
        }
      }
    }
    for (const e of levelEdges) {
      const route = placed.routes.get(`${e.a}\u0000${e.b}`) ?? [];
      edges.set(`${e.src}\u0000${e.dst}`, route.map(p => ({ x: p.x, y: p.y })));
    }
    const level = { width: placed.width, height: placed.height, boxes, edges };
    remember(key, level);
    return level;
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

/** One level laid out by dagre (network simplex ranks; longest path for large levels). */
function dagreLevel(
  sizes: Map<string, { width: number; height: number }>,
  edges: { a: string; b: string }[],
  large: boolean
): { width: number; height: number; boxes: Record<string, Box>; routes: Map<string, Point[]> } {
  const g = new dagre.graphlib.Graph({ multigraph: false });
  // network simplex gives the tidiest ranks but grows quickly with the number of ranks
  g.setGraph({ ...SPACING, ranker: large ? 'longest-path' : 'network-simplex' });
  g.setDefaultEdgeLabel(() => ({}));
  for (const [id, size] of sizes) {
    g.setNode(id, { ...size });
  }
  for (const e of edges) {
    g.setEdge(e.a, e.b);
  }
  dagre.layout(g);
  const boxes: Record<string, Box> = {};
  for (const id of sizes.keys()) {
    const d = g.node(id) as { x: number; y: number; width: number; height: number };
    boxes[id] = { x: d.x, y: d.y, width: d.width, height: d.height };
  }
  const routes = new Map<string, Point[]>();
  for (const e of edges) {
    routes.set(`${e.a}\u0000${e.b}`, (g.edge(e.a, e.b) as { points?: Point[] } | undefined)?.points ?? []);
  }
  const label = g.graph() as { width?: number; height?: number };
  return { width: label.width ?? 0, height: label.height ?? 0, boxes, routes };
}
