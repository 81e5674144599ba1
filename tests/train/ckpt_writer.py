"""A process that saves large checkpoints in a loop, for the kill-mid-save test.

Every variable holds the step number of the save, so a restored checkpoint is consistent
exactly when all variables hold the same value as the step in its name. Prints "saving N"
before and "saved N" after each save, flushing, so the test can wait on those lines.
"""

import sys

import numpy as np

import nbflow as tf

directory, first_step = sys.argv[1], int(sys.argv[2])
size = 1024 * 1024  # float32 elements: 4 MB per variable
values = [tf.Variable(np.zeros(size, np.float32), name=f"layer{i}/w") for i in range(6)]
saver = tf.train.Saver(max_to_keep=2)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for n in range(first_step, first_step + 1000):
        for v in values:
            v.load(np.full(size, n, np.float32), sess)
        print(f"saving {n}", flush=True)
        saver.save(sess, f"{directory}/model.ckpt", global_step=n, write_meta_graph=False)
        print(f"saved {n}", flush=True)
