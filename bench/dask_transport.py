"""How to move a tensor between two Dask worker processes: the alternatives, measured.

nbflow's cross-task Send/Recv must not go through the client or the scheduler. This measures,
on one machine over loopback, a tiny message and a 100 MB array from one worker to another
(a) through RPC handlers that a WorkerPlugin installs in each worker, (b) as an actor-to-actor
call, and (c) as a scheduled Dask task that depends on one on the other worker. Run it with
``python -m bench.dask_transport``; the README records what it printed and which design won.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from distributed import Client, LocalCluster, WorkerPlugin
from distributed.protocol.serialize import to_serialize

ROUNDS = 200


class _Echo(WorkerPlugin):
    name = "bench-echo"

    def setup(self, worker):
        async def echo(comm=None, payload=None):
            return payload

        async def blob(comm=None, nbytes=0):
            return to_serialize(np.ones(nbytes // 8))

        async def ping_peer(comm=None, peer=None, rounds=1):
            times = []
            for _ in range(rounds):
                start = time.perf_counter()
                await worker.rpc(peer).bench_echo(payload=b"x")
                times.append(time.perf_counter() - start)
            return times

        async def pull_peer(comm=None, peer=None, nbytes=0, rounds=1):
            times = []
            for _ in range(rounds):
                start = time.perf_counter()
                await worker.rpc(peer).bench_blob(nbytes=nbytes)
                times.append(time.perf_counter() - start)
            return times

        worker.handlers.update(
            bench_echo=echo, bench_blob=blob, bench_ping_peer=ping_peer, bench_pull_peer=pull_peer
        )


class Peer:
    def echo(self, payload):
        return payload

    def ping(self, other, rounds):
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            other.echo(b"x").result()
            times.append(time.perf_counter() - start)
        return times


def _ms(times):
    return statistics.median(times) * 1e3


def main() -> None:
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=2,
            processes=True,
            dashboard_address=None,
            scheduler_port=0,
            host="127.0.0.1",
        ) as cluster,
        Client(cluster) as client,
    ):
        a, b = sorted(client.scheduler_info()["workers"])
        client.register_plugin(_Echo())

        async def call(addr, op, **kw):
            return await getattr(client.rpc(addr), op)(**kw)

        rpc_times = client.sync(call, a, "bench_ping_peer", peer=b, rounds=ROUNDS)
        big = client.sync(call, a, "bench_pull_peer", peer=b, nbytes=100_000_000, rounds=5)
        pa = client.submit(Peer, actor=True, workers=[a]).result()
        pb = client.submit(Peer, actor=True, workers=[b]).result()
        actor_times = pa.ping(pb, ROUNDS).result()

        task_times = []
        for i in range(30):
            start = time.perf_counter()
            x = client.submit(lambda i: i, i, workers=[b], pure=False)
            client.submit(lambda v: v + 1, x, workers=[a], pure=False).result()
            task_times.append(time.perf_counter() - start)
        print(f"worker rpc handler, tiny message:   {_ms(rpc_times):.3f} ms")
        print(f"actor-to-actor call, tiny message:  {_ms(actor_times):.3f} ms")
        print(f"two scheduled tasks across workers: {_ms(task_times):.3f} ms")
        mb_s = 100 / statistics.median(big)
        print(
            f"worker rpc handler, 100 MB array:   {statistics.median(big) * 1e3:.1f} ms "
            f"({mb_s:,.0f} MB/s)"
        )


if __name__ == "__main__":
    main()
