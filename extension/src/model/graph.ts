/**
 * The graph view's model: a GraphDef (model/graphDef.ts) folded into name-scope groups
 * (whitepaper §9.1), and the graph as drawn for a set of expanded groups.
 *
 * Pure functions, no DOM: the Board panel and the notebook widgets share them.
 *
 *   buildHierarchy    name scopes -> a tree of groups ("a/b/c" lives in groups "a" and "a/b");
 *                     an op named like a scope goes into it; a scope with more than
 *                     MAX_CHILDREN ops is split into synthetic groups of consecutive names, so
 *                     no layout ever sees thousands of siblings
 *   collapse          the expanded groups -> the visible graph (items, edges, parents); each
 *                     drawn edge keeps its kind (data, control, reference) and its tensors;
 *                     ops set aside (model/auxiliary.ts) leave stubs on the nodes they touch
 *   groupsAround      the groups to expand to show an op
 *   searchOps         ops whose name or type matches a query
 *   edgeLabel         what a drawn edge carries, for its hover label
 *
 * Series of alike groups (model/graphSeries.ts) are groups too: collapse draws them as one node.
 */
import { asideHomes } from './auxiliary';
import {
  EdgeKind,
  elementCount,
  formatTensor,
  Graph,
  lastComponent,
  naturalOrder,
  OpNode,
  scopeOf,
  tensorInfo
} from './graphDef';

export interface Group {
  path: string;
  parent: string;
  /** Direct child groups' paths. */
  groups: string[];
  /** Direct child ops' names. */
  ops: string[];
  /** Number of ops anywhere below. */
  size: number;
  /** True for a group that splits a scope with too many ops (not a name scope). */
  synthetic?: boolean;
  /** For a series group: how many members (groups of one structure, numbered). */
  series?: number;
}

/** Most children one group shows; larger scopes are split into synthetic groups. */
export const MAX_CHILDREN = 200;

/**
 * Every name scope as a group; the root group has path "". Sets each op's `group`. A scope
 * holding more than `maxChildren` ops keeps its first ones and moves the rest, in name order,
 * into synthetic groups "[first … last]" (nested again if there are very many).
 */
export function buildHierarchy(graph: Graph, maxChildren = MAX_CHILDREN): Map<string, Group> {
  const groups = new Map<string, Group>();
  const ensure = (path: string): Group => {
    let g = groups.get(path);
    if (!g) {
      const parent = scopeOf(path);
      g = { path, parent, groups: [], ops: [], size: 0 };
      groups.set(path, g);
      if (path !== '') {
        ensure(parent).groups.push(path);
      }
    }
    return g;
  };
  ensure('');
  for (const op of graph.ops.values()) {
    ensure(op.scope);
  }
  for (const op of graph.ops.values()) {
    // an op named like a scope (variable "W" beside "W/Assign", "W/read") lives in that
    // group, as TensorBoard draws it: never "W" and "⊞ W" side by side
    const home = groups.has(op.name) ? op.name : op.scope;
    groups.get(home)!.ops.push(op.name);
    op.group = home;
  }
  for (const g of [...groups.values()]) {
    if (g.ops.length + g.groups.length > maxChildren) {
      g.ops.sort(naturalOrder);
      g.ops = splitOps(graph, groups, g, g.ops, Math.max(2, maxChildren - g.groups.length), maxChildren);
    }
  }
  const count = (g: Group): number => {
    g.size = g.ops.length + g.groups.reduce((n, c) => n + count(groups.get(c)!), 0);
    return g.size;
  };
  count(groups.get('')!);
  return groups;
}

/** Fit `names` into at most `room` children of `parent`: returns the ops kept directly. */
function splitOps(
  graph: Graph,
  groups: Map<string, Group>,
  parent: Group,
  names: string[],
  room: number,
  maxChildren: number
): string[] {
  if (names.length <= room) {
    return names;
  }
  const chunk = Math.max(maxChildren, Math.ceil(names.length / room));
  for (let i = 0; i < names.length; i += chunk) {
    const part = names.slice(i, i + chunk);
    const label = `[${lastComponent(part[0])} … ${lastComponent(part[part.length - 1])}]`;
    const path = parent.path ? `${parent.path}/${label}` : label;
    const g: Group = { path, parent: parent.path, groups: [], ops: [], size: 0, synthetic: true };
    groups.set(path, g);
    parent.groups.push(path);
    g.ops = splitOps(graph, groups, g, part, maxChildren, maxChildren);
    for (const name of g.ops) {
      graph.ops.get(name)!.group = path;
    }
  }
  return [];
}

export type ItemKind = 'op' | 'group';

export interface VisibleItem {
  /** "op:<name>" or "group:<path>". */
  id: string;
  kind: ItemKind;
  /** Op name or group path. */
  name: string;
  /** Short label: last name component. */
  label: string;
  /** Id of the enclosing expanded group, "" at top level. */
  parent: string;
  expanded: boolean;
}

export interface VisibleEdge {
  src: string;
  dst: string;
  /** Number of op edges folded into this one. */
  count: number;
  /** True when every folded edge is a control edge. */
  control: boolean;
  /** 'ref' if any folded edge updates a variable, else 'data' if any carries a tensor. */
  kind: EdgeKind;
  /** The distinct tensors carried ("op:0"), in order of appearance. */
  tensors: string[];
}

/** One entry of the auxiliary area: an aside op, or a group whose ops are all aside. */
export interface AsideEntry {
  name: string;
  /** The op's type, or "group" for a group. */
  op: string;
  /** How many ops it stands for. */
  ops: number;
  /** How many edges it has to the drawn graph. */
  degree: number;
}

/** Small marks on a drawn node for its edges to the auxiliary area (TensorBoard's stubs). */
export interface Stubs {
  /** Auxiliary entries feeding the node. */
  in: string[];
  /** Auxiliary entries the node feeds. */
  out: string[];
}

export interface VisibleGraph {
  items: VisibleItem[];
  edges: VisibleEdge[];
  /** The auxiliary area: aside ops folded into their outermost all-aside group. */
  aside: AsideEntry[];
  /** Stubs by item id. */
  stubs: Map<string, Stubs>;
}

export const groupId = (path: string): string => `group:${path}`;
export const opId = (name: string): string => `op:${name}`;

/**
 * The graph as drawn: a collapsed group stands for all ops below it; an expanded group is a
 * cluster around its children. Edges between ops map to edges between their representatives;
 * parallel ones are merged and counted, and edges inside one representative disappear.
 */
export function collapse(
  graph: Graph,
  groups: Map<string, Group>,
  expanded: ReadonlySet<string>,
  aside: ReadonlySet<string> = new Set()
): VisibleGraph {
  const items: VisibleItem[] = [];
  const representative = new Map<string, string>();
  const walk = (path: string, parentId: string): void => {
    const g = groups.get(path)!;
    for (const child of g.groups) {
      const open = expanded.has(child);
      const id = groupId(child);
      const opsBelow = countVisibleOps(groups, child, aside);
      if (opsBelow === 0) {
        continue;
      }
      items.push({ id, kind: 'group', name: child, label: lastComponent(child), parent: parentId, expanded: open });
      if (open) {
        walk(child, id);
      } else {
        markRepresentative(groups, child, id, representative);
      }
    }
    for (const name of g.ops) {
      if (aside.has(name)) {
        continue;
      }
      const id = opId(name);
      items.push({ id, kind: 'op', name, label: lastComponent(name), parent: parentId, expanded: false });
      representative.set(name, id);
    }
  };
  walk('', '');
  const homes = asideHomes(graph, groups, aside);
  const merged = new Map<string, VisibleEdge>();
  const entries = new Map<string, AsideEntry>();
  for (const [name, home] of homes) {
    const entry = entries.get(home) ?? { name: home, op: groups.has(home) ? 'group' : graph.ops.get(name)!.op, ops: 0, degree: 0 };
    entry.ops += 1;
    entries.set(home, entry);
  }
  const stubs = new Map<string, Stubs>();
  const stub = (id: string, side: 'in' | 'out', home: string): void => {
    const s = stubs.get(id) ?? { in: [], out: [] };
    if (!s[side].includes(home)) {
      s[side].push(home);
    }
    stubs.set(id, s);
  };
  for (const e of graph.edges) {
    const srcHome = homes.get(e.src);
    const dstHome = homes.get(e.dst);
    if (srcHome !== undefined || dstHome !== undefined) {
      const a = representative.get(e.src);
      const b = representative.get(e.dst);
      if (srcHome !== undefined && b) {
        entries.get(srcHome)!.degree += 1;
        stub(b, 'in', srcHome);
      }
      if (dstHome !== undefined && a) {
        entries.get(dstHome)!.degree += 1;
        stub(a, 'out', dstHome);
      }
      continue;
    }
    const a = representative.get(e.src);
    const b = representative.get(e.dst);
    if (!a || !b || a === b) {
      continue;
    }
    const key = `${a}\u0000${b}`;
    const tensor = e.control ? '' : `${e.src}:${e.index}`;
    const m = merged.get(key);
    if (m) {
      m.count += 1;
      m.control = m.control && e.control;
      m.kind = m.kind === 'ref' || e.kind === 'ref' ? 'ref' : m.kind === 'data' || e.kind === 'data' ? 'data' : 'control';
      if (tensor && !m.tensors.includes(tensor)) {
        m.tensors.push(tensor);
      }
    } else {
      merged.set(key, { src: a, dst: b, count: 1, control: e.control, kind: e.kind, tensors: tensor ? [tensor] : [] });
    }
  }
  const asideList = [...entries.values()].sort((x, y) => x.name.localeCompare(y.name));
  return { items, edges: [...merged.values()], aside: asideList, stubs };
}

function countVisibleOps(groups: Map<string, Group>, path: string, aside: ReadonlySet<string>): number {
  if (aside.size === 0) {
    return groups.get(path)!.size;
  }
  const g = groups.get(path)!;
  let n = g.ops.filter(o => !aside.has(o)).length;
  for (const c of g.groups) {
    n += countVisibleOps(groups, c, aside);
  }
  return n;
}

function markRepresentative(
  groups: Map<string, Group>,
  path: string,
  id: string,
  representative: Map<string, string>
): void {
  const g = groups.get(path)!;
  for (const op of g.ops) {
    representative.set(op, id);
  }
  for (const c of g.groups) {
    markRepresentative(groups, c, id, representative);
  }
}

/** Groups to expand so that an op becomes visible: its enclosing groups, outermost first. */
export function groupsAround(graph: Graph, groups: Map<string, Group>, name: string): string[] {
  const out: string[] = [];
  const op = graph.ops.get(name);
  for (let p = op ? op.group : scopeOf(name); p !== ''; p = groups.get(p)?.parent ?? '') {
    out.unshift(p);
  }
  return out;
}

/** Ops whose name or op type contains the query (case-insensitive), at most `limit`. */
export function searchOps(graph: Graph, query: string, limit = 50): OpNode[] {
  const q = query.trim().toLowerCase();
  if (!q) {
    return [];
  }
  const out: OpNode[] = [];
  for (const op of graph.ops.values()) {
    if (op.name.toLowerCase().includes(q) || op.op.toLowerCase().includes(q)) {
      out.push(op);
      if (out.length >= limit) {
        break;
      }
    }
  }
  return out;
}

/** The devices used below a group (or by an op), most frequent first. */
export function devicesBelow(graph: Graph, groups: Map<string, Group>, item: VisibleItem): string[] {
  const counts = new Map<string, number>();
  const add = (op: string): void => {
    const d = graph.ops.get(op)!.device;
    counts.set(d, (counts.get(d) ?? 0) + 1);
  };
  if (item.kind === 'op') {
    add(item.name);
  } else {
    const visit = (p: string): void => {
      const g = groups.get(p)!;
      g.ops.forEach(add);
      g.groups.forEach(visit);
    };
    visit(item.name);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(e => e[0]);
}

/**
 * The sum of a per-op figure over the ops an item stands for: compute time (µs) from a trace's
 * durations, or memory (bytes) from its allocation figures.
 */
export function computeTimeOf(
  groups: Map<string, Group>,
  item: VisibleItem,
  opTimes: ReadonlyMap<string, number>
): number {
  if (item.kind === 'op') {
    return opTimes.get(item.name) ?? 0;
  }
  let total = 0;
  const visit = (p: string): void => {
    const g = groups.get(p)!;
    for (const o of g.ops) {
      total += opTimes.get(o) ?? 0;
    }
    g.groups.forEach(visit);
  };
  visit(item.name);
  return total;
}

/** What an edge carries, for its hover label: "MatMul:0 float32[?,10]", one line per tensor. */
export function edgeLabel(graph: Graph, edge: VisibleEdge, limit = 6): string {
  if (!edge.tensors.length) {
    return `control dependency${edge.count > 1 ? ` (${edge.count})` : ''}`;
  }
  const lines = edge.tensors.slice(0, limit).map(t => {
    const info = tensorInfo(graph, t);
    return info ? `${t} ${formatTensor(info)}` : t;
  });
  if (edge.tensors.length > limit) {
    lines.push(`… ${edge.tensors.length - limit} more`);
  }
  if (edge.kind === 'ref') {
    lines.unshift('reference (variable update)');
  }
  return lines.join('\n');
}

/** Elements carried by an edge, over its distinct tensors (for a size-weighted stroke). */
export function edgeElements(graph: Graph, edge: VisibleEdge): number {
  let n = 0;
  for (const t of edge.tensors) {
    const info = tensorInfo(graph, t);
    n += info ? elementCount(info) : 1;
  }
  return n;
}
