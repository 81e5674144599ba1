import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import dagre from '@dagrejs/dagre';

import { chainLevel, computeLayout, LayoutNode } from '../src/model/layout';

/** What dagre itself draws for these nodes and edges, with the view's spacing. */
function dagreDraws(sizes: Map<string, { width: number; height: number }>, edges: { a: string; b: string }[]) {
  const g = new dagre.graphlib.Graph({ multigraph: false });
  g.setGraph({ rankdir: 'TB', nodesep: 18, ranksep: 36, edgesep: 8, marginx: 16, marginy: 16, ranker: 'network-simplex' });
  g.setDefaultEdgeLabel(() => ({}));
  for (const [id, s] of sizes) {
    g.setNode(id, { ...s });
  }
  for (const e of edges) {
    g.setEdge(e.a, e.b);
  }
  dagre.layout(g);
  return g;
}

test('a_chain_is_placed_as_the_column_dagre_draws', () => {
  // seeded sizes: a layer's ops, a wide group box, a tall one
  let seed = 7;
  const rand = (): number => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  const sizes = new Map<string, { width: number; height: number }>();
  const order = Array.from({ length: 12 }, (_, i) => `n${(i * 5) % 12}`); // ids not in chain order
  for (const id of order) {
    sizes.set(id, { width: Math.round(60 + 240 * rand()), height: Math.round(26 + 80 * rand()) });
  }
  const edges = order.slice(1).map((b, i) => ({ a: order[i], b }));
  edges.push({ a: order[3], b: order[4] }); // a second edge between the same two: one route
  const placed = chainLevel(sizes, edges)!;
  assert.ok(placed, 'a chain');
  const g = dagreDraws(sizes, edges);
  const label = g.graph() as { width: number; height: number };
  assert.equal(placed.width, label.width);
  assert.equal(placed.height, label.height);
  for (const id of sizes.keys()) {
    const d = g.node(id) as { x: number; y: number };
    assert.ok(Math.abs(placed.boxes[id].x - d.x) < 1e-6 && Math.abs(placed.boxes[id].y - d.y) < 1e-6, id);
  }
  for (const { a, b } of edges) {
    const route = (g.edge(a, b) as { points: { x: number; y: number }[] }).points;
    const ours = placed.routes.get(`${a}\u0000${b}`)!;
    assert.equal(ours.length, route.length);
    ours.forEach((p, i) => assert.ok(Math.abs(p.x - route[i].x) < 1e-6 && Math.abs(p.y - route[i].y) < 1e-6, `${a}->${b}`));
  }
});

test('only_a_single_chain_takes_the_column', () => {
  const sizes = new Map(['a', 'b', 'c', 'd'].map(id => [id, { width: 50, height: 20 }]));
  const chain = [{ a: 'a', b: 'b' }, { a: 'b', b: 'c' }, { a: 'c', b: 'd' }];
  assert.ok(chainLevel(sizes, chain));
  assert.equal(chainLevel(sizes, [...chain, { a: 'a', b: 'c' }]), null, 'a fork');
  assert.equal(chainLevel(sizes, [{ a: 'a', b: 'c' }, { a: 'b', b: 'c' }, { a: 'c', b: 'd' }]), null, 'a join');
  assert.equal(chainLevel(sizes, [{ a: 'a', b: 'b' }, { a: 'c', b: 'd' }]), null, 'two chains');
  assert.equal(chainLevel(sizes, [{ a: 'a', b: 'b' }, { a: 'b', b: 'c' }]), null, 'a node apart');
  assert.equal(chainLevel(sizes, [{ a: 'a', b: 'b' }, { a: 'b', b: 'c' }, { a: 'c', b: 'a' }]), null, 'a cycle and one apart');
  const ring = new Map(['a', 'b', 'c'].map(id => [id, { width: 50, height: 20 }]));
  assert.equal(chainLevel(ring, [{ a: 'a', b: 'b' }, { a: 'b', b: 'c' }, { a: 'c', b: 'a' }]), null, 'a cycle');
});

/** `groups` chained groups of `ops` chained ops each, as the view shows them with `open` expanded. */
function chainedGroups(groups: number, ops: number, open: Set<number>) {
  const nodes: LayoutNode[] = [];
  const edges: { src: string; dst: string }[] = [];
  let previous = '';
  for (let g = 0; g < groups; g++) {
    nodes.push({ id: `g${g}`, width: 120, height: 40, parent: '', cluster: open.has(g) });
    if (!open.has(g)) {
      if (previous) {
        edges.push({ src: previous, dst: `g${g}` });
      }
      previous = `g${g}`;
      continue;
    }
    // inside: a chain of ops and a constant feeding its first op (a join: dagre lays it out)
    nodes.push({ id: `g${g}/const`, width: 60, height: 26, parent: `g${g}`, cluster: false });
    edges.push({ src: `g${g}/const`, dst: `g${g}/op0` });
    for (let o = 0; o < ops; o++) {
      nodes.push({ id: `g${g}/op${o}`, width: 90, height: 28, parent: `g${g}`, cluster: false });
      if (previous) {
        edges.push({ src: previous, dst: `g${g}/op${o}` });
      }
      previous = `g${g}/op${o}`;
    }
  }
  return { nodes, edges };
}

test('a_relayout_reuses_each_unchanged_level_and_places_it_the_same', () => {
  const fresh = (open: Set<number>) => computeLayout({ id: 1, ...chainedGroups(8, 30, open) });
  const one = fresh(new Set([2]));
  const two = fresh(new Set([2, 5])); // group 2's level comes from the cache, placed anew
  const again = fresh(new Set([2]));
  assert.deepEqual(again.boxes, one.boxes, 'the same request, the same layout');
  assert.deepEqual(again.edges, one.edges);
  // inside group 2 the ops sit where they sat, relative to the group's box
  const rel = (r: typeof one, id: string) => ({ x: r.boxes[id].x - r.boxes['g2'].x, y: r.boxes[id].y - r.boxes['g2'].y });
  for (let o = 0; o < 30; o++) {
    assert.deepEqual(rel(two, `g2/op${o}`), rel(one, `g2/op${o}`));
  }
  // and the newly opened group holds its ops, in chain order
  const g5 = two.boxes['g5'];
  for (let o = 0; o < 30; o++) {
    const b = two.boxes[`g5/op${o}`];
    assert.ok(Math.abs(b.x - g5.x) <= g5.width / 2 && Math.abs(b.y - g5.y) <= g5.height / 2, `g5/op${o}`);
    if (o) {
      assert.ok(b.y > two.boxes[`g5/op${o - 1}`].y);
    }
  }
});
