/**
 * Repeated structure in a graph: groups built alike (a repeated layer, a tower per GPU, the cells
 * of an unrolled RNN) are recognised by a signature of their structure, independent of names,
 * and runs of alike siblings become one series node, as TensorBoard draws `cell_[0-99]`.
 *
 *   groupSignatures    each group -> a hash of its op types, its child groups' signatures and
 *                      its internal edges by (source type, destination type)
 *   repeatedSignatures signatures shared by two or more groups (drawn in one colour)
 *   groupSeries        sibling groups name_0 … name_N (or name, name_1, …) of one signature,
 *                      and sibling ops name_0 … name_N of one type, -> one series group
 */
import { Graph, lastComponent } from './graphDef';
import type { Group } from './graph';

/**
 * A structural signature per group: its op types, its child groups' signatures and its
 * internal edges by (source type, destination type), independent of names. Groups sharing a
 * signature (a repeated layer, a tower per GPU) are drawn alike.
 */
export function groupSignatures(graph: Graph, groups: Map<string, Group>): Map<string, string> {
  const signatures = new Map<string, string>();
  const internal = new Map<string, string[]>();
  for (const e of graph.edges) {
    const a = graph.ops.get(e.src)!;
    const b = graph.ops.get(e.dst)!;
    if (a.group === b.group) {
      const list = internal.get(a.group) ?? [];
      list.push(`${a.op}>${b.op}${e.control ? '^' : ''}`);
      internal.set(a.group, list);
    }
  }
  const visit = (path: string): string => {
    const known = signatures.get(path);
    if (known !== undefined) {
      return known;
    }
    const g = groups.get(path)!;
    const parts = [
      ...g.ops.map(n => graph.ops.get(n)!.op).sort(),
      '|',
      ...g.groups.map(visit).sort(),
      '|',
      ...(internal.get(path) ?? []).sort()
    ];
    const sig = hashString(parts.join(','));
    signatures.set(path, sig);
    return sig;
  };
  for (const path of groups.keys()) {
    visit(path);
  }
  return signatures;
}

/** Signatures shared by at least two groups of two or more ops, with their member count. */
export function repeatedSignatures(
  groups: Map<string, Group>,
  signatures: Map<string, string>
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [path, g] of groups) {
    if (path !== '' && g.size >= 2) {
      const s = signatures.get(path)!;
      counts.set(s, (counts.get(s) ?? 0) + 1);
    }
  }
  for (const [s, n] of [...counts]) {
    if (n < 2) {
      counts.delete(s);
    }
  }
  return counts;
}

function hashString(s: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 16777619);
    h2 = Math.imul(h2 + c, 2246822519);
  }
  return (h1 >>> 0).toString(16) + (h2 >>> 0).toString(16);
}

/** Fewest alike siblings folded into a series (TensorBoard's seriesNodeMinSize). */
export const SERIES_MIN_MEMBERS = 5;

/**
 * Series: sibling groups named `name_0 … name_N` (or `name`, `name_1`, … ) that share one
 * structure are folded into one group `name_[0-N]`, as TensorBoard draws a 100-step RNN's cells
 * as one node. Members keep their paths; only their parent changes. Returns the series paths.
 */
export function groupSeries(
  graph: Graph,
  groups: Map<string, Group>,
  signatures: Map<string, string>,
  minMembers = SERIES_MIN_MEMBERS
): string[] {
  const made = groupOpSeries(graph, groups, minMembers);
  for (const parent of [...groups.values()]) {
    const buckets = new Map<string, { index: number; path: string }[]>();
    for (const child of parent.groups) {
      const g = groups.get(child)!;
      if (g.synthetic || g.series) {
        continue;
      }
      const m = /^(.*?)_?(\d+)$/.exec(lastComponent(child));
      const [base, index] = m ? [m[1], Number(m[2])] : [lastComponent(child), 0];
      const key = `${base}\u0000${signatures.get(child)}`;
      const list = buckets.get(key) ?? [];
      list.push({ index, path: child });
      buckets.set(key, list);
    }
    for (const [key, members] of buckets) {
      if (members.length < minMembers) {
        continue;
      }
      members.sort((a, b) => a.index - b.index);
      const base = key.slice(0, key.indexOf('\u0000'));
      const first = members[0];
      const separator = lastComponent(first.path) === base ? '_' : lastComponent(first.path).slice(base.length, -String(first.index).length) || '';
      const label = `${base}${separator}[${first.index}-${members[members.length - 1].index}]`;
      const path = parent.path ? `${parent.path}/${label}` : label;
      if (groups.has(path)) {
        continue;
      }
      const inSeries = new Set(members.map(x => x.path));
      const series: Group = {
        path,
        parent: parent.path,
        groups: members.map(x => x.path),
        ops: [],
        size: members.reduce((n, x) => n + groups.get(x.path)!.size, 0),
        synthetic: true,
        series: members.length
      };
      groups.set(path, series);
      for (const x of members) {
        groups.get(x.path)!.parent = path;
      }
      const at = parent.groups.findIndex(c => inSeries.has(c));
      parent.groups = parent.groups.filter(c => !inSeries.has(c));
      parent.groups.splice(at, 0, path);
      signatures.set(path, `series:${signatures.get(first.path)}`);
      made.push(path);
    }
  }
  return made;
}

/**
 * Ops of one type named `name_0 … name_N` (100 placeholders of an unrolled RNN) that feed none
 * of each other fold into a series group `name_[0-N]`; a chain `op0 → op1 → …` stays a chain.
 */
function groupOpSeries(graph: Graph, groups: Map<string, Group>, minMembers: number): string[] {
  const made: string[] = [];
  const consumers = new Map<string, string[]>();
  for (const e of graph.edges) {
    const list = consumers.get(e.src) ?? [];
    list.push(e.dst);
    consumers.set(e.src, list);
  }
  for (const parent of [...groups.values()]) {
    if (parent.synthetic) {
      continue;
    }
    const buckets = new Map<string, { index: number; name: string }[]>();
    for (const name of parent.ops) {
      const m = /^(.*?)_?(\d+)$/.exec(lastComponent(name));
      const [base, index] = m ? [m[1], Number(m[2])] : [lastComponent(name), 0];
      const key = `${base}\u0000${graph.ops.get(name)!.op}`;
      const list = buckets.get(key) ?? [];
      list.push({ index, name });
      buckets.set(key, list);
    }
    for (const [key, members] of buckets) {
      if (members.length < minMembers || groups.has(members[0].name)) {
        continue;
      }
      const names = new Set(members.map(x => x.name));
      const chained = members.some(x => (consumers.get(x.name) ?? []).some(d => names.has(d)));
      if (chained) {
        continue;
      }
      members.sort((a, b) => a.index - b.index);
      const base = key.slice(0, key.indexOf('\u0000'));
      const label = `${base}_[${members[0].index}-${members[members.length - 1].index}]`;
      const path = parent.path ? `${parent.path}/${label}` : label;
      if (groups.has(path)) {
        continue;
      }
      groups.set(path, {
        path,
        parent: parent.path,
        groups: [],
        ops: members.map(x => x.name),
        size: members.length,
        synthetic: true,
        series: members.length
      });
      parent.ops = parent.ops.filter(o => !names.has(o));
      parent.groups.push(path);
      for (const x of members) {
        graph.ops.get(x.name)!.group = path;
      }
      made.push(path);
    }
  }
  return made;
}
