"""TLS: with a ``distributed.security.Security`` every nbflow message travels encrypted, and
``Cluster.local()`` is secure by default: a peer without its credentials cannot reach a worker.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import os
import warnings

import numpy as np
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from distributed.comm import connect
from distributed.protocol import to_serialize
from distributed.security import Security

import nbflow as tf
from nbflow.distributed import Cluster


def self_signed_certificate(directory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 that is its own CA; returns (cert, key) paths."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "nbflow-test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(cert_path), str(key_path)


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    cert, key = self_signed_certificate(tmp_path_factory.mktemp("tls"))
    security = Security(
        tls_ca_file=cert,
        tls_client_cert=cert,
        tls_client_key=key,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
        require_encryption=True,
    )
    with Cluster.local(
        n_workers=2, memory_limit="1GiB", security=security, spec={"ps": 1, "worker": 1}
    ) as c:
        yield c


def test_tasks_talk_over_tls_and_train(tls_cluster):
    assert tls_cluster.target.startswith("nbflow://tls://")
    assert all(t.address.startswith("tls://") for t in tls_cluster.tasks.values())
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(np.zeros(2, np.float32), name="w")
    with tf.device("/job:worker/task:0"):
        x = tf.placeholder(tf.float32, [2])
        loss = tf.reduce_sum(tf.square(w - x))
    train = tf.train.GradientDescentOptimizer(0.25).minimize(loss)
    with tf.Session(tls_cluster.target) as sess:
        sess.run(w.initializer)
        for _ in range(20):
            sess.run(train, {x: np.array([1.0, -1.0], np.float32)})
        np.testing.assert_allclose(sess.run(w), [1.0, -1.0], atol=1e-3)


def _loop_in_cluster(cluster, steps):
    """A training loop run on a Dask worker: it attaches to the cluster's tasks itself."""
    import numpy as np

    import nbflow as tf

    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(0.0, name="in_cluster_counter")
        bump = tf.assign_add(v, 1.0)
        with tf.Session(cluster.target) as sess:
            sess.run(v.initializer)
            for _ in range(steps):
                sess.run(bump)
            return float(np.asarray(sess.run(v))), sorted(cluster.tasks)


def test_a_training_loop_can_run_inside_the_cluster(tls_cluster):
    value, tasks = tls_cluster.run_in_cluster(_loop_in_cluster, 5)
    assert value == 5.0
    assert tasks == sorted(tls_cluster.tasks)


# --- secure by default -------------------------------------------------------------------------
class _Marker:
    """Unpickling one creates a file: proof that bytes from a peer ran as code in the worker."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


async def _send_pickle(address: str, payload: object, connection_args: dict) -> object:
    """Connect to ``address`` as an outside peer, send a message carrying a pickled object and
    read the reply (a plain Dask comm: what any local user can write in a few lines)."""
    comm = await connect(address, timeout=3, **connection_args)
    try:
        await comm.write({"op": "nbflow_ping", "reply": True, "payload": to_serialize(payload)})
        return await asyncio.wait_for(comm.read(), 5)
    finally:
        comm.abort()


def _wait_for(condition, timeout: float = 10.0) -> bool:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture(scope="module")
def default_cluster():
    with Cluster.local(n_workers=1, memory_limit="1GiB", spec={"ps": 1, "worker": 1}) as c:
        yield c


def test_cluster_local_uses_tls_with_its_own_credentials(default_cluster):
    assert default_cluster.target.startswith("nbflow://tls://")
    assert all(t.address.startswith("tls://") for t in default_cluster.tasks.values())
    security = default_cluster.client.security
    assert security is default_cluster.security
    assert security.require_encryption and "BEGIN CERTIFICATE" in security.tls_ca_file
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="v")
        with tf.device("/job:worker/task:0"):
            doubled = v * 2.0
        with tf.Session(default_cluster.target) as sess:
            sess.run(v.initializer)
            assert sess.run(doubled) == 2.0


@pytest.mark.parametrize("peer", ["plain TCP", "TLS with other credentials"])
def test_an_unauthenticated_peer_cannot_reach_a_worker_of_cluster_local(
    default_cluster, tmp_path, peer
):
    worker = next(iter(default_cluster.tasks.values())).address
    marker = str(tmp_path / "ran")
    if peer == "plain TCP":
        address, args = "tcp://" + worker.split("://", 1)[1], {}
    else:
        address, args = worker, Security.temporary().get_connection_args("client")
    with pytest.raises((OSError, asyncio.TimeoutError)):  # CommClosedError is an OSError
        asyncio.run(_send_pickle(address, _Marker(marker), args))
    # the cluster's own client still reaches the worker, and nothing ran there
    assert default_cluster.check_health() == {n: True for n in default_cluster.tasks}
    assert not os.path.exists(marker)


def test_plain_tcp_runs_what_a_peer_sends_and_warns_once(tmp_path):
    """The control for the test above: with ``security=False`` the same message runs."""
    marker = str(tmp_path / "ran")
    with Cluster.local(n_workers=1, memory_limit="1GiB", security=False, health_interval=None) as c:
        worker = next(iter(c.client.scheduler_info()["workers"]))
        assert worker.startswith("tcp://")
        try:
            asyncio.run(_send_pickle(worker, _Marker(marker), {}))
        except Exception:  # noqa: BLE001 - the handler refuses the argument after unpickling
            pass
        assert _wait_for(lambda: os.path.exists(marker)), "the pickled payload ran"
        with pytest.warns(RuntimeWarning, match="has no TLS"):
            Cluster.from_client(c.client, health_interval=None).close()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            Cluster.from_client(c.client, health_interval=None).close()  # warned once
            Cluster.from_client(c.client, security=False, health_interval=None).close()
