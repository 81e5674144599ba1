# Adapted from TensorFlow's tutorial program word2vec_basic.py (TensorFlow r1.15):
# https://github.com/tensorflow/tensorflow/blob/r1.15/tensorflow/examples/tutorials/word2vec/word2vec_basic.py
# Licence: Apache License 2.0, Copyright 2015 The TensorFlow Authors.
# Changes for nbflow's tests: `import nbflow as tf`; the text8 download replaced by a generated
# corpus with a small vocabulary; 300 steps; the plotting of embeddings removed.
"""Basic word2vec: skip-gram with noise-contrastive estimation."""

import collections
import math
import random

import numpy as np

import nbflow as tf

# Step 1: a generated corpus: sentences from a tiny grammar, so neighbours carry meaning.
rng = random.Random(0)
subjects, verbs, objects = ["cat", "dog", "bird", "fish"], ["eats", "sees", "likes"], ["food", "water", "toys", "sun"]  # fmt: skip
vocabulary = []
for _ in range(3000):
    vocabulary += [rng.choice(subjects), rng.choice(verbs), rng.choice(objects), "and"]
vocabulary_size = 12


# Step 2: build the dictionary and replace rare words with UNK token.
def build_dataset(words, n_words):
    count = [["UNK", -1]]
    count.extend(collections.Counter(words).most_common(n_words - 1))
    dictionary = {word: i for i, (word, _) in enumerate(count)}
    data = [dictionary.get(word, 0) for word in words]
    count[0][1] = data.count(0)
    reversed_dictionary = dict(zip(dictionary.values(), dictionary.keys()))
    return data, count, dictionary, reversed_dictionary


data, count, dictionary, reverse_dictionary = build_dataset(vocabulary, vocabulary_size)
data_index = 0


# Step 3: a function to generate a training batch for the skip-gram model.
def generate_batch(batch_size, num_skips, skip_window):
    global data_index
    assert batch_size % num_skips == 0
    assert num_skips <= 2 * skip_window
    batch = np.ndarray(shape=(batch_size), dtype=np.int32)
    labels = np.ndarray(shape=(batch_size, 1), dtype=np.int32)
    span = 2 * skip_window + 1
    buffer = collections.deque(maxlen=span)
    if data_index + span > len(data):
        data_index = 0
    buffer.extend(data[data_index : data_index + span])
    data_index += span
    for i in range(batch_size // num_skips):
        context_words = [w for w in range(span) if w != skip_window]
        words_to_use = rng.sample(context_words, num_skips)
        for j, context_word in enumerate(words_to_use):
            batch[i * num_skips + j] = buffer[skip_window]
            labels[i * num_skips + j, 0] = buffer[context_word]
        if data_index == len(data):
            buffer.extend(data[0:span])
            data_index = span
        else:
            buffer.append(data[data_index])
            data_index += 1
    data_index = (data_index + len(data) - span) % len(data)
    return batch, labels


# Step 4: build and train a skip-gram model.
batch_size, embedding_size, skip_window, num_skips, num_sampled = 64, 16, 1, 2, 4
valid_examples = np.array([1, 2, 3])

graph = tf.Graph()
with graph.as_default():
    train_inputs = tf.placeholder(tf.int32, shape=[batch_size])
    train_labels = tf.placeholder(tf.int32, shape=[batch_size, 1])
    valid_dataset = tf.constant(valid_examples, dtype=tf.int32)
    with tf.name_scope("embeddings"):
        embeddings = tf.Variable(tf.random_uniform([vocabulary_size, embedding_size], -1.0, 1.0))
        embed = tf.nn.embedding_lookup(embeddings, train_inputs)
    with tf.name_scope("weights"):
        nce_weights = tf.Variable(
            tf.truncated_normal(
                [vocabulary_size, embedding_size], stddev=1.0 / math.sqrt(embedding_size)
            )
        )
    with tf.name_scope("biases"):
        nce_biases = tf.Variable(tf.zeros([vocabulary_size]))
    with tf.name_scope("loss"):
        loss = tf.reduce_mean(
            tf.nn.nce_loss(
                weights=nce_weights,
                biases=nce_biases,
                labels=train_labels,
                inputs=embed,
                num_sampled=num_sampled,
                num_classes=vocabulary_size,
            )
        )
    tf.summary.scalar("loss", loss)
    with tf.name_scope("optimizer"):
        optimizer = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keepdims=True))
    normalized_embeddings = embeddings / norm
    valid_embeddings = tf.nn.embedding_lookup(normalized_embeddings, valid_dataset)
    similarity = tf.matmul(valid_embeddings, normalized_embeddings, transpose_b=True)
    init = tf.global_variables_initializer()

# Step 5: begin training.
num_steps = 300
with tf.Session(graph=graph) as session:
    init.run()
    average_loss = 0
    for step in range(num_steps):
        batch_inputs, batch_labels = generate_batch(batch_size, num_skips, skip_window)
        feed_dict = {train_inputs: batch_inputs, train_labels: batch_labels}
        _, loss_val = session.run([optimizer, loss], feed_dict=feed_dict)
        average_loss += loss_val
        if step % 50 == 49:
            print("Average loss at step", step, ": loss =", average_loss / 50)
            average_loss = 0
    sim = similarity.eval()
    for i in range(len(valid_examples)):
        nearest = (-sim[i, :]).argsort()[1:4]
        print(
            "Nearest to",
            reverse_dictionary[valid_examples[i]],
            ":",
            [reverse_dictionary[k] for k in nearest],
        )
    final_embeddings = normalized_embeddings.eval()
