"""Send and Recv: the only way values cross devices (whitepaper §3.2.2).

The partitioner (``runtime/partition.py``) replaces every cross-device edge ``x -> y`` by
``x -> _Send`` on x's device and ``_Recv -> y`` on y's device, matched through the step's
rendezvous (``ctx.rendezvous``) by a key naming the step, both devices and the tensor. Users
never build these ops. ``_Recv`` is an asynchronous kernel: it parks a callback in the
rendezvous and returns, so a Recv waiting for its value pins no executor thread.

With ``compression="bfloat16"`` (GraphOptions.enable_bfloat16_sendrecv) a float32 value travels
as its upper 16 bits — the mantissa truncated, as in whitepaper §5.5 — and the receiver pads
the lost bits with zeros.
"""

from __future__ import annotations

from typing import Any, NamedTuple
from collections.abc import Callable

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, TensorSpec
from nbflow.framework.tensor_shape import TensorShape

_SEND_ATTRS = {
    "tensor_name": REQUIRED,
    "send_device": REQUIRED,
    "recv_device": REQUIRED,
    "compression": "",
}


def truncate_to_bfloat16(xp: Any, value: Any) -> Any:
    """The upper 16 bits of each float32 (mantissa truncated), as uint16."""
    bits = xp.ascontiguousarray(value, dtype=xp.float32).view(xp.uint32)
    return (bits >> 16).astype(xp.uint16)


def expand_bfloat16(xp: Any, value: Any) -> Any:
    """float32 values from their upper 16 bits, the lost mantissa bits zero."""
    return (value.astype(xp.uint32) << 16).view(xp.float32)


class RendezvousKey(NamedTuple):
    """The parts of a rendezvous key (the one place its format is defined)."""

    send_device: str
    step_id: int
    recv_device: str
    tensor_name: str

    def __str__(self) -> str:
        return f"{self.send_device};{self.step_id};{self.recv_device};{self.tensor_name}"

    @classmethod
    def parse(cls, key: str) -> RendezvousKey:
        """``RendezvousKey.parse("/cpu:0;7;/cpu:1;a:0")`` -> its four parts."""
        send_device, step_id, recv_device, tensor_name = key.split(";", 3)
        return cls(send_device, int(step_id), recv_device, tensor_name)


def rendezvous_key(send_device: str, step_id: int, recv_device: str, tensor_name: str) -> str:
    """The key of one transfer of one step: ``"src_device;step_id;dst_device;tensor_name"``
    (TensorFlow's layout, with the step id in the incarnation's place)."""
    return f"{send_device};{step_id};{recv_device};{tensor_name}"


def _key(ctx: KernelContext, send_device: str, recv_device: str, tensor_name: str) -> str:
    return rendezvous_key(send_device, ctx.step_id, recv_device, tensor_name)


class _RendezvousOp(OpDef):
    """Base of the four ops: the key's attrs; stateful, so that graph optimizations never merge
    or fold them; no gradient; no outputs (``_Recv`` has its value)."""

    abstract = True
    attrs = _SEND_ATTRS
    num_outputs = 0
    stateful = True
    differentiable = False

    def infer(self, *inputs: TensorSpec, **attrs: Any) -> list:
        return []


class _Send(_RendezvousOp):
    """Hands ``tensor`` to the rendezvous under its key; it has no outputs."""

    inputs = ("tensor",)
    is_send = True

    def compute(
        self,
        ctx: KernelContext,
        tensor: Any,
        tensor_name: str,
        send_device: str,
        recv_device: str,
        compression: str,
    ) -> None:
        if compression == "bfloat16" and getattr(tensor, "dtype", None) == ctx.xp.float32:
            tensor = truncate_to_bfloat16(ctx.xp, tensor)
        ctx.rendezvous.send(_key(ctx, send_device, recv_device, tensor_name), tensor, send_device)


class _RefSend(_Send):
    """A Send of a variable reference itself (for a consumer that wants the resource)."""

    inputs = ("tensor&",)


class _ControlSend(_RendezvousOp):
    """Signals that its control inputs ran, for a control edge that crosses devices."""

    is_send = True

    def compute(
        self,
        ctx: KernelContext,
        tensor_name: str,
        send_device: str,
        recv_device: str,
        compression: str,
    ) -> None:
        ctx.rendezvous.send(_key(ctx, send_device, recv_device, tensor_name), None, send_device)


class _Recv(_RendezvousOp):
    """Waits (asynchronously) for the value its matching Send delivers; copies it here."""

    attrs = {**_SEND_ATTRS, "tensor_type": REQUIRED, "shape": TensorShape(None)}
    num_outputs = 1
    is_async = True
    is_recv = True

    def infer(self, tensor_type: dtypes.DType, shape: TensorShape, **attrs: Any) -> TensorSpec:
        return TensorSpec(shape, tensor_type)

    def compute(
        self,
        ctx: KernelContext,
        tensor_name: str,
        send_device: str,
        recv_device: str,
        compression: str,
        tensor_type: dtypes.DType,
        shape: TensorShape,
        done: Callable[..., None],
    ) -> None:
        _receive(
            ctx, _key(ctx, send_device, recv_device, tensor_name), recv_device, done, compression
        )


class _ControlRecv(_RendezvousOp):
    """Waits for a ``_ControlSend``; its consumers take it as a control input."""

    is_async = True
    is_recv = True

    def compute(
        self,
        ctx: KernelContext,
        tensor_name: str,
        send_device: str,
        recv_device: str,
        compression: str,
        done: Callable[..., None],
    ) -> None:
        _receive(ctx, _key(ctx, send_device, recv_device, tensor_name), recv_device, done, "")


def _receive(
    ctx: KernelContext, key: str, recv_device: str, done: Callable[..., None], compression: str
) -> None:
    """Park ``arrived`` in the rendezvous: it copies the value to ``recv_device``, undoes the
    compression and calls ``done``; a cancelled step withdraws it."""
    rendezvous = ctx.rendezvous
    token: list[Any] = [None]

    def arrived(value: Any, src_device: str, error: BaseException | None) -> None:
        ctx.cancellation.deregister(token[0])
        if error is not None:
            done(error=error)
            return
        try:
            devices = rendezvous.devices
            dst, src = devices.get(recv_device), devices.get(src_device)
            if dst is not None and src is not None and not (dst.is_host and src.is_host):
                value = dst.copy_from(value, src)
            if compression == "bfloat16" and getattr(value, "dtype", None) == ctx.xp.uint16:
                value = expand_bfloat16(ctx.xp, value)
        except BaseException as exc:  # noqa: BLE001 - reported through the kernel protocol
            done(error=exc)
            return
        done(value)

    def cancelled() -> None:
        rendezvous.cancel(key, errors.CancelledError(None, None, f"Recv of {key} cancelled"))

    token[0] = ctx.cancellation.register(cancelled)
    if token[0] is None:
        done(error=errors.CancelledError(None, None, f"Recv of {key} cancelled"))
        return
    rendezvous.recv(key, arrived)
