import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { detailRows, fromKernelSeries, toKernelPaths, toViewPaths } from '../src/model/notebook';
import { xValues } from '../src/model/series';

test('group paths translate between the kernel ("a/b/") and the view ("a/b")', () => {
  assert.deepEqual(toViewPaths(['layer1/', 'layer1/inner/']), ['layer1', 'layer1/inner']);
  assert.deepEqual(toKernelPaths(['layer2', 'layer1']), ['layer1/', 'layer2/']);
});

test('detail rows show where an op was created and its last values', () => {
  const rows = detailRows({
    name: 'loss',
    created: { cell: 'model', line: 3, source: 'loss = tf.reduce_sum(h)' },
    values: { 'loss:0': '5' }
  });
  assert.deepEqual(rows, [
    ['created', "cell 'model', line 3"],
    ['source', 'loss = tf.reduce_sum(h)'],
    ['last loss:0', '5']
  ]);
  assert.deepEqual(detailRows({ name: 'x', created: { file: 'train.py', line: 9 } }), [['created', 'train.py, line 9']]);
  assert.deepEqual(detailRows({}), []);
});

test('kernel series become chart series with wall-time axes', () => {
  const [s] = fromKernelSeries([{ run: 'mlp', tag: 'mse', steps: [0, 1], wall_times: [10, 12], values: [2, 1] }]);
  assert.equal(s.nextOffset, 2);
  assert.deepEqual(xValues(s, 'relative'), [0, 2]);
  assert.deepEqual(xValues(s, 'wall'), [10, 12]);
});
