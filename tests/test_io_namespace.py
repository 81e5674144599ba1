"""tf.io holds TensorFlow 1.15's names that nbflow has; tf.data's iterator functions work."""

import numpy as np

import nbflow as tf

IO_NAMES = """FIFOQueue FixedLenFeature FixedLenSequenceFeature PaddingFIFOQueue PriorityQueue
QueueBase RandomShuffleQueue SparseFeature TFRecordCompressionType TFRecordOptions
TFRecordWriter VarLenFeature decode_bmp decode_csv decode_gif decode_image decode_jpeg
decode_png decode_raw encode_jpeg encode_png gfile is_jpeg matching_files parse_example
parse_sequence_example parse_single_example parse_single_sequence_example parse_tensor
read_file serialize_tensor tf_record_iterator write_file write_graph decode_and_crop_jpeg
decode_base64 decode_compressed decode_json_example deserialize_many_sparse encode_base64
extract_jpeg_shape match_filenames_once serialize_many_sparse serialize_sparse""".split()

TOP_LEVEL = """parse_example parse_single_example parse_single_sequence_example decode_raw
read_file write_file matching_files serialize_tensor parse_tensor random_crop FixedLenFeature
VarLenFeature FixedLenSequenceFeature SparseFeature""".split()


def test_io_and_top_level_names_exist():
    assert [n for n in IO_NAMES if not hasattr(tf.io, n)] == []
    assert [n for n in TOP_LEVEL if not hasattr(tf, n)] == []
    assert tf.io.TFRecordOptions(tf.io.TFRecordCompressionType.GZIP).compression_type == "GZIP"


def test_data_iterator_functions():
    dataset = tf.data.Dataset.from_tensor_slices((np.arange(3), np.ones([3, 2], np.float32)))
    assert tf.data.get_output_types(dataset) == (tf.int64, tf.float32)
    assert tf.data.get_output_shapes(dataset)[1].as_list() == [2]
    iterator = tf.data.make_initializable_iterator(dataset)
    assert tf.data.get_output_classes(iterator) == (tf.Tensor, tf.Tensor)
    first, _ = iterator.get_next()
    one_shot = tf.data.make_one_shot_iterator(dataset).get_next()[0]
    with tf.Session() as sess:
        sess.run(iterator.initializer)
        assert [sess.run(first) for _ in range(3)] == [0, 1, 2]
        assert sess.run(one_shot) == 0


def test_tfrecord_writer_compresses_as_options_say(tmp_path):
    records = [b"alpha", b"", b"gamma" * 50]
    for options in (
        tf.io.TFRecordOptions(tf.io.TFRecordCompressionType.GZIP),
        tf.io.TFRecordOptions("ZLIB"),
        None,
    ):
        kind = tf.io.TFRecordOptions.get_compression_type_string(options)
        path = str(tmp_path / f"data{kind}.tfrecord")
        with tf.io.TFRecordWriter(path, options) as writer:
            for record in records:
                writer.write(record)
        assert list(tf.io.tf_record_iterator(path, options)) == records
        dataset = tf.data.TFRecordDataset(path, compression_type=kind or None)
        value = tf.data.make_one_shot_iterator(dataset).get_next()
        with tf.Session() as sess:
            assert [sess.run(value) for _ in records] == records


def test_tfrecord_reader_reads_compressed_files(tmp_path):
    path = str(tmp_path / "data.tfrecord.gz")
    with tf.io.TFRecordWriter(path, "GZIP") as writer:
        for record in (b"a", b"b"):
            writer.write(record)
    files = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    _, value = tf.TFRecordReader(options=tf.io.TFRecordOptions("GZIP")).read(files)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert [sess.run(value) for _ in range(2)] == [b"a", b"b"]
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
