"""A TF1-era input pipeline end to end: PNG images in tf.train.Examples in a TFRecord file, read
by a queue-based reader, parsed, decoded, randomly cropped, batched; a small conv net with LRN
trains on them and its exponential moving averages track the weights."""

import numpy as np

import nbflow as tf


def _write_records(path, rng, count=64):
    images = np.zeros((count, 10, 10, 3), np.uint8)
    labels = rng.integers(0, 2, count)
    for k, label in enumerate(labels):  # class 1: a bright square in the middle
        images[k] = rng.integers(0, 60, (10, 10, 3))
        if label:
            images[k, 3:7, 3:7] = 220
    with tf.Session() as sess:
        pngs = sess.run([tf.image.encode_png(image) for image in images])
    with tf.io.TFRecordWriter(path) as writer:
        for png, label in zip(pngs, labels):
            example = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "image/encoded": tf.train.Feature(
                            bytes_list=tf.train.BytesList(value=[png])
                        ),
                        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                    }
                )
            )
            writer.write(example.SerializeToString())


def test_tfrecord_png_pipeline_trains(tmp_path):
    rng = np.random.default_rng(0)
    path = str(tmp_path / "train.tfrecord")
    _write_records(path, rng)
    tf.reset_default_graph()
    tf.set_random_seed(1)
    files = tf.train.string_input_producer([path], seed=1)
    _, record = tf.TFRecordReader().read(files)
    features = tf.parse_single_example(
        record,
        {
            "image/encoded": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64),
        },
    )
    image = tf.image.decode_png(features["image/encoded"], channels=3)
    image = tf.random_crop(tf.image.convert_image_dtype(image, tf.float32), [8, 8, 3], seed=2)
    images, labels = tf.train.shuffle_batch(
        [image, features["label"]], batch_size=16, capacity=64, min_after_dequeue=16, seed=3
    )
    net = tf.layers.conv2d(images, 4, 3, activation=tf.nn.relu)
    net = tf.nn.lrn(net, depth_radius=2, alpha=1e-3, beta=0.75)
    logits = tf.layers.dense(tf.layers.flatten(net), 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.02).minimize(loss, global_step=step)
    ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step)
    with tf.control_dependencies([train]):
        train = ema.apply(tf.trainable_variables())
    losses = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        for _ in range(40):
            losses.append(sess.run([train, loss])[1])
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
        kernel = tf.trainable_variables()[0]
        averaged = sess.run(ema.average(kernel))
        assert list(averaged.shape) == kernel.shape.as_list()
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:10])
