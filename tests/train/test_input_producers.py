"""slice_input_producer and the *_join batchers: every example arrives, rows stay together."""

import numpy as np

import nbflow as tf


def _drain(fetch, limit=100):
    """Values of ``fetch`` until the pipeline's OutOfRangeError (at most ``limit`` runs)."""
    out = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            for _ in range(limit):
                out.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return out


def test_slice_input_producer_keeps_rows_together_for_each_epoch():
    images = np.arange(5 * 2, dtype=np.float32).reshape(5, 2)
    labels = np.arange(5, dtype=np.int64) * 10
    image, label = tf.train.slice_input_producer([images, labels], num_epochs=2, seed=4)
    assert image.shape.as_list() == [2] and label.dtype == tf.int64
    rows = _drain([image, label])
    assert len(rows) == 10
    for x, y in rows:
        np.testing.assert_array_equal(x, images[y // 10])
    assert sorted(int(y) for _, y in rows) == sorted(list(labels) * 2)
    assert [int(y) for _, y in rows[:5]] != sorted(labels.tolist())  # shuffled


def _sources():
    first = tf.train.input_producer(tf.constant([1, 2, 3]), num_epochs=1, shuffle=False)
    second = tf.train.input_producer(tf.constant([10, 20, 30]), num_epochs=1, shuffle=False)
    return [[first.dequeue()], [second.dequeue()]]


def test_batch_join_mixes_every_source():
    (batch,) = tf.train.batch_join(_sources(), batch_size=2, allow_smaller_final_batch=True)
    values = np.concatenate(_drain(batch))
    assert sorted(values.tolist()) == [1, 2, 3, 10, 20, 30]


def test_shuffle_batch_join_mixes_every_source():
    (batch,) = tf.train.shuffle_batch_join(
        _sources(),
        batch_size=3,
        capacity=10,
        min_after_dequeue=2,
        seed=1,
        allow_smaller_final_batch=True,
    )
    values = np.concatenate(_drain(batch))
    assert sorted(values.tolist()) == [1, 2, 3, 10, 20, 30]
