import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { BASIS_POINTS, percentiles, rebin } from '../src/model/histogram';
import {
  appendReply,
  downsampleMinMax,
  emptySeries,
  filterTags,
  indicesInRange,
  nearestIndex,
  readoutAt,
  relativeLogdir,
  runLabel,
  formatDuration,
  formatWallTime,
  niceExtent,
  smooth,
  ticks,
  toCsv,
  xValues,
  yDomain
} from '../src/model/series';
import { buildTimeline, opTimes } from '../src/model/trace';

const reply = (offset: number, steps: number[], values: (number | null)[]) => ({
  run: 'train', tag: 'loss', offset, next_offset: offset + steps.length, total: offset + steps.length,
  downsampled: false, steps, wall_times: steps.map(s => 100 + s), values
});

test('incremental_replies_append_and_out_of_order_ones_are_ignored', () => {
  let s = emptySeries('train', 'loss');
  s = appendReply(s, reply(0, [0, 1], [1, 2]));
  s = appendReply(s, reply(2, [2], [3]));
  s = appendReply(s, reply(1, [9], [9]));
  assert.deepEqual(s.steps, [0, 1, 2]);
  assert.equal(s.nextOffset, 3);
  assert.deepEqual(xValues(s, 'relative'), [0, 1, 2]);
  assert.deepEqual(xValues(s, 'wall'), [100, 101, 102]);
  const restarted = appendReply(s, reply(0, [0], [5]));
  assert.deepEqual(restarted.steps, [0], 'a reply from offset 0 starts the series over');
});

test('smoothing_is_a_debiased_moving_average_that_keeps_gaps', () => {
  assert.deepEqual(smooth([1, 2, 3], 0), [1, 2, 3]);
  const s = smooth([2, 2, null, 2], 0.9);
  assert.ok(Math.abs((s[0] as number) - 2) < 1e-9, 'no pull towards zero');
  assert.equal(s[2], null);
  assert.ok(Math.abs((s[3] as number) - 2) < 1e-9);
  const step = smooth([0, 0, 0, 10, 10], 0.5) as number[];
  assert.ok(step[3] > 0 && step[3] < 10 && step[4] > step[3]);
});

test('smoothing_matches_tensorboards_debiased_ema_computed_with_numpy', () => {
  // last = w*last + (1-w)*v; smoothed = last / (1 - w**n), n counting finite points
  // (numbers from NumPy, weight 0.6; the NaN is skipped and stays a gap)
  const expected = [1.0, 2.875, null, 2.428571428571429, 4.988970588235294, 4.126301179736294];
  const got = smooth([1, 4, null, 2, 8, 3], 0.6);
  got.forEach((v, i) => {
    if (expected[i] === null) {
      assert.equal(v, null);
    } else {
      assert.ok(Math.abs((v as number) - (expected[i] as number)) < 1e-12, `point ${i}: ${v} vs ${expected[i]}`);
    }
  });
  assert.deepEqual(smooth([0.1, 0.1, 0.1], 0.9), [0.1, 0.1, 0.1], 'a constant series is left exactly as it is');
  assert.equal(smooth([5, 7], 0.999)[0], 5, 'the first point is never pulled towards zero');
});

test('y_range_ignores_outliers_by_percentile_as_tensorboard', () => {
  // 0..19 and one spike of 1000: sorted[ceil(0.05*20)] = 1, sorted[floor(0.95*20)] = 19;
  // padded by 5% of 18 = 0.9 to [0.1, 19.9], rounded out at step 2 to [0, 20]
  const values = [...Array.from({ length: 20 }, (_, i) => i), 1000];
  assert.deepEqual(yDomain(values, { ignoreOutliers: true }), { min: 0, max: 20 });
  // all of it: [0, 1000] padded by 50 to [-50, 1050], rounded out at step 100
  assert.deepEqual(yDomain(values, { ignoreOutliers: false }), { min: -100, max: 1100 });
  assert.deepEqual(yDomain([1, 1000, null], { ignoreOutliers: true }), { min: -100, max: 1100 }, 'two values: nothing dropped');
  assert.deepEqual(yDomain([3, 3]), { min: 0, max: 6 }, 'a flat line sits in the middle');
  assert.deepEqual(yDomain([-2]), { min: -4, max: 0 });
  assert.deepEqual(yDomain([0, 0]), { min: -1, max: 1 });
  assert.deepEqual(yDomain([0.01, -1, 10, 100], { log: true }), { min: 0.005, max: 200 });
  assert.equal(yDomain([null, NaN]), null);
  assert.deepEqual(niceExtent({ min: 0.1, max: 19.9 }), { min: 0, max: 20 });
});

test('relative_and_wall_axes_label_durations_and_dates', () => {
  assert.equal(formatDuration(42), '42s');
  assert.equal(formatDuration(750), '12.5 min');
  assert.equal(formatDuration(3 * 3600 + 720), '3.2 hr');
  assert.equal(formatDuration(2 * 86400), '2 d');
  const t = new Date(2026, 10, 25, 9, 5, 7).getTime() / 1000;
  assert.equal(formatWallTime(t, 3600), '09:05:07');
  assert.equal(formatWallTime(t, 3 * 86400), '11-25 09:05');
  assert.equal(formatWallTime(t, 30 * 86400), '2026-11-25');
});

test('relative_axis_starts_each_run_at_its_own_first_point', () => {
  const a = { ...emptySeries('a', 'loss'), steps: [0, 1], wallTimes: [1000, 1010], values: [1, 2] };
  const b = { ...emptySeries('b', 'loss'), steps: [0, 1], wallTimes: [5000, 5030], values: [1, 2] };
  assert.deepEqual(xValues(a, 'relative'), [0, 10]);
  assert.deepEqual(xValues(b, 'relative'), [0, 30]);
  assert.deepEqual(xValues(b, 'wall'), [5000, 5030]);
});

test('downsampling_keeps_extremes_and_ends', () => {
  const xs = Array.from({ length: 1000 }, (_, i) => i);
  const ys = xs.map(i => (i === 437 ? 100 : i === 612 ? -100 : Math.sin(i / 50)));
  const keep = downsampleMinMax(xs, ys, 40);
  assert.ok(keep.length <= 40);
  for (const i of [0, 437, 612, 999]) {
    assert.ok(keep.includes(i), `index ${i} kept`);
  }
  assert.deepEqual(downsampleMinMax([0, 1, 2], [1, 2, 3], 10), [0, 1, 2]);
});

test('csv_and_tag_filter', () => {
  let s = emptySeries('run,1', 'loss');
  s = appendReply(s, reply(0, [0, 1], [0.5, null]));
  assert.equal(toCsv([s]), 'run,tag,step,wall_time,value\n"run,1",loss,0,100,0.5\n"run,1",loss,1,101,nan\n');
  assert.deepEqual(filterTags(['loss', 'accuracy', 'lr'], '^l'), ['loss', 'lr']);
  assert.deepEqual(filterTags(['a(b', 'c'], 'a('), ['a(b']);
});

test('ticks_are_round_numbers', () => {
  assert.deepEqual(ticks({ min: 0, max: 1 }, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
});

test('absolute_logdirs_inside_the_root_become_relative', () => {
  assert.equal(relativeLogdir('/srv/work/logs/run1', '/srv/work'), 'logs/run1');
  assert.equal(relativeLogdir('/srv/work/', '/srv/work'), '.');
  assert.equal(relativeLogdir('/elsewhere', '/srv/work'), null);
  assert.equal(relativeLogdir('./logs', '/srv/work'), 'logs');
  assert.equal(relativeLogdir('', '/srv/work'), '.');
  assert.equal(relativeLogdir('/srv/work/logs', ''), null, 'unknown root: ask the server');
});

test('histogram_percentiles_and_rebinning', () => {
  const h = { min: 0, max: 10, num: 10, sum: 50, sum_squares: 0, bucket_limit: [5, 10], bucket: [5, 5] };
  const p = percentiles(h, BASIS_POINTS);
  assert.equal(p[0], 0);
  assert.equal(p[4], 5);
  assert.equal(p[8], 10);
  assert.deepEqual(rebin(h, 0, 10, 2), [5, 5]);
  const constant = { min: 0.1, max: 0.1, num: 4, sum: 0.4, sum_squares: 0.04, bucket_limit: [0.09, 0.11, 1e308], bucket: [0, 4, 0] };
  assert.deepEqual(rebin(constant, 0, 0.2, 4), [0, 0, 4, 0]);
  assert.deepEqual(percentiles(constant, [0, 5000, 10000]), [0.1, 0.1, 0.1]);
});

test('distribution_bands_match_tensorboards_compressor', () => {
  // compress_histogram_proto of TensorBoard 2.21 (tensorboard.plugins.distribution.compressor)
  // on the same histogram, an empty bucket included
  const h = { min: -1.5, max: 2.25, num: 20, sum: 0, sum_squares: 0, bucket_limit: [-1, 0, 0.5, 1, 2, 3], bucket: [2, 6, 0, 5, 4, 3] };
  const expected = [-1.5, -1.166, -0.804333333333, -0.305, 0.7, 1.2075, 1.9565, 2.138666666667, 2.25];
  percentiles(h).forEach((v, i) => assert.ok(Math.abs(v - expected[i]) < 1e-9, `basis point ${BASIS_POINTS[i]}: ${v} vs ${expected[i]}`));
  const even = { min: 0, max: 10, num: 10, sum: 50, sum_squares: 0, bucket_limit: [5, 10], bucket: [5, 5] };
  percentiles(even).forEach((v, i) => assert.ok(Math.abs(v - BASIS_POINTS[i] / 1000) < 1e-9));
});

test('trace_rows_per_device_and_thread_with_op_times', () => {
  const trace = {
    traceEvents: [
      { ph: 'M', name: 'process_name', pid: 0, args: { name: '/cpu:0 Compute' } },
      { ph: 'X', name: 'MatMul', pid: 0, tid: 1, ts: 10, dur: 5, args: { name: 'layer1/matmul', op: 'MatMul' } },
      { ph: 'X', name: 'Relu', pid: 0, tid: 2, ts: 16, dur: 2, args: { name: 'layer1/relu', op: 'Relu' } },
      { ph: 'X', name: 'MatMul', pid: 0, tid: 1, ts: 20, dur: 3, args: { name: 'layer1/matmul', op: 'MatMul' } }
    ]
  };
  const t = buildTimeline(trace);
  assert.deepEqual(t.rows.map(r => r.label), ['/cpu:0 Compute / tid 1', '/cpu:0 Compute / tid 2']);
  assert.equal(t.start, 10);
  assert.equal(t.end, 23);
  assert.deepEqual([...opTimes(trace)], [['layer1/matmul', 8], ['layer1/relu', 2]]);
});

test('trace flow events become arrows between rows, a step chain giving one per hop', () => {
  const trace = {
    traceEvents: [
      { ph: 'X', name: 'send', pid: 0, tid: 0, ts: 10, dur: 5 },
      { ph: 'X', name: 'recv', pid: 1, tid: 3, ts: 12, dur: 8 },
      { ph: 'X', name: 'use', pid: 2, tid: 0, ts: 30, dur: 1 },
      { ph: 'f', name: 't0', cat: 'DataFlow', id: 7, pid: 1, tid: 3, ts: 19 },
      { ph: 's', name: 't0', cat: 'DataFlow', id: 7, pid: 0, tid: 0, ts: 10 },
      { ph: 's', name: 't1', cat: 'DataFlow', id: 8, pid: 0, tid: 0, ts: 11 },
      { ph: 't', name: 't1', cat: 'DataFlow', id: 8, pid: 1, tid: 3, ts: 13 },
      { ph: 'f', name: 't1', cat: 'DataFlow', id: 8, pid: 2, tid: 0, ts: 30 },
      { ph: 'f', name: 'lost', cat: 'DataFlow', id: 9, pid: 2, tid: 0, ts: 30 }
    ]
  };
  const flows = buildTimeline(trace).flows.map(f => [f.name, f.fromRow, f.fromTs, f.toRow, f.toTs]);
  assert.deepEqual(flows, [
    ['t1', '0/0', 11, '1/3', 13],
    ['t0', '0/0', 10, '1/3', 19],
    ['t1', '1/3', 13, '2/0', 30]
  ]);
});

test('legends name runs after their folder, the log directory itself after its last component', () => {
  assert.equal(runLabel('train', 'logs'), 'train');
  assert.equal(runLabel('.', 'logs/mlp'), 'mlp');
  assert.equal(runLabel('.', '/home/me/logs/mlp/'), 'mlp');
  assert.equal(runLabel('.', '.'), 'run');
});

test('nearest_index_finds_the_closest_point_with_ties_to_the_earlier', () => {
  const xs = [0, 10, 20, 40];
  assert.equal(nearestIndex(xs, -5), 0);
  assert.equal(nearestIndex(xs, 4), 0);
  assert.equal(nearestIndex(xs, 5), 0, 'a tie goes to the earlier point');
  assert.equal(nearestIndex(xs, 6), 1);
  assert.equal(nearestIndex(xs, 29), 2);
  assert.equal(nearestIndex(xs, 31), 3);
  assert.equal(nearestIndex(xs, 99), 3);
  assert.equal(nearestIndex([], 1), -1);
  // against a linear scan on random ascending data
  let seed = 7;
  const rand = (): number => ((seed = (seed * 48271) % 2147483647) / 2147483647);
  const data = Array.from({ length: 200 }, () => rand() * 1000).sort((a, b) => a - b);
  for (let k = 0; k < 500; k++) {
    const x = rand() * 1100 - 50;
    const best = data.reduce((b, v, i) => (Math.abs(v - x) < Math.abs(data[b] - x) ? i : b), 0);
    assert.equal(Math.abs(data[nearestIndex(data, x)] - x), Math.abs(data[best] - x));
  }
});

test('a_zoomed_range_draws_its_points_and_one_beyond_each_end', () => {
  const xs = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  assert.deepEqual(indicesInRange(xs, { min: 2.5, max: 5.5 }), [2, 7]); // 2..6
  assert.deepEqual(indicesInRange(xs, { min: -3, max: 100 }), [0, 10]);
  assert.deepEqual(indicesInRange(xs, { min: 3, max: 3 }), [2, 5]);
  assert.deepEqual(indicesInRange(xs, { min: 20, max: 30 }), [9, 10]);
});

test('the_readout_gives_the_nearest_points_smoothed_and_raw_value_step_and_times', () => {
  let s = emptySeries('train', 'loss');
  s = appendReply(s, reply(0, [0, 5, 10], [4, 2, 1]));
  const xs = xValues(s, 'step');
  const smoothed = smooth(s.values, 0.5);
  const r = readoutAt(s, xs, smoothed, 6)!;
  assert.equal(r.step, 5);
  assert.equal(r.value, 2);
  assert.equal(r.smoothed, smoothed[1]);
  assert.equal(r.wallTime, 105);
  assert.equal(r.relative, 5);
  assert.equal(readoutAt(emptySeries('a', 'b'), [], [], 0), null);
});
