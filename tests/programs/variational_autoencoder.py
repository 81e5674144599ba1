# Adapted from Aymeric Damien's TensorFlow-Examples, variational_autoencoder.py:
# https://github.com/aymericdamien/TensorFlow-Examples/blob/master/examples/3_NeuralNetworks/variational_autoencoder.py
# Licence: MIT, Copyright (c) 2016 Aymeric Damien.
# Changes for nbflow's tests: `import nbflow as tf`; MNIST replaced by scikit-learn's bundled 8x8
# digits; smaller layers; 150 steps; the image plotting removed.
"""A variational auto-encoder (VAE) on digits: reparameterized sampling, KL + reconstruction."""

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf

images = (load_digits().data / 16.0).astype(np.float32)

learning_rate = 0.001
num_steps = 150
batch_size = 64
image_dim, hidden_dim, latent_dim = 64, 128, 2


def glorot_init(shape):
    return tf.random_normal(shape=shape, stddev=1.0 / tf.sqrt(shape[0] / 2.0))


weights = {
    "encoder_h1": tf.Variable(glorot_init([image_dim, hidden_dim])),
    "z_mean": tf.Variable(glorot_init([hidden_dim, latent_dim])),
    "z_std": tf.Variable(glorot_init([hidden_dim, latent_dim])),
    "decoder_h1": tf.Variable(glorot_init([latent_dim, hidden_dim])),
    "decoder_out": tf.Variable(glorot_init([hidden_dim, image_dim])),
}
biases = {
    "encoder_b1": tf.Variable(glorot_init([hidden_dim])),
    "z_mean": tf.Variable(glorot_init([latent_dim])),
    "z_std": tf.Variable(glorot_init([latent_dim])),
    "decoder_b1": tf.Variable(glorot_init([hidden_dim])),
    "decoder_out": tf.Variable(glorot_init([image_dim])),
}

input_image = tf.placeholder(tf.float32, shape=[None, image_dim])
encoder = tf.nn.tanh(tf.matmul(input_image, weights["encoder_h1"]) + biases["encoder_b1"])
z_mean = tf.matmul(encoder, weights["z_mean"]) + biases["z_mean"]
z_std = tf.matmul(encoder, weights["z_std"]) + biases["z_std"]
eps = tf.random_normal(tf.shape(z_std), dtype=tf.float32, mean=0.0, stddev=1.0, name="epsilon")
z = z_mean + tf.exp(z_std / 2) * eps
decoder = tf.nn.tanh(tf.matmul(z, weights["decoder_h1"]) + biases["decoder_b1"])
decoder = tf.nn.sigmoid(tf.matmul(decoder, weights["decoder_out"]) + biases["decoder_out"])


def vae_loss(x_reconstructed, x_true):
    encode_decode_loss = x_true * tf.log(1e-10 + x_reconstructed) + (1 - x_true) * tf.log(
        1e-10 + 1 - x_reconstructed
    )
    encode_decode_loss = -tf.reduce_sum(encode_decode_loss, 1)
    kl_div_loss = 1 + z_std - tf.square(z_mean) - tf.exp(z_std)
    kl_div_loss = -0.5 * tf.reduce_sum(kl_div_loss, 1)
    return tf.reduce_mean(encode_decode_loss + kl_div_loss)


loss_op = vae_loss(decoder, input_image)
optimizer = tf.train.RMSPropOptimizer(learning_rate=learning_rate)
train_op = optimizer.minimize(loss_op)
init = tf.global_variables_initializer()

rng = np.random.RandomState(0)
with tf.Session() as sess:
    sess.run(init)
    for i in range(1, num_steps + 1):
        batch_x = images[rng.choice(len(images), batch_size)]
        _, l = sess.run([train_op, loss_op], feed_dict={input_image: batch_x})
        if i % 30 == 0 or i == 1:
            print(f"Step {i}, Loss: loss = {l:f}")
