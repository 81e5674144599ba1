"""``tf.data.Options``: settings a pipeline carries, set with ``Dataset.with_options``.

    options = tf.data.Options()
    options.experimental_deterministic = False
    options.experimental_threading.private_threadpool_size = 4
    dataset = dataset.with_options(options)
    dataset.options()          # the merge of every with_options() upstream

Each option is ``None`` until set (TensorFlow's default applies); setting a value of the wrong
type, or an option that does not exist, raises at once. Merging two Options keeps what either
sets and raises ``ValueError`` where both set the same option to different values (TensorFlow
1.15's rule). nbflow's pipelines are deterministic and run each transformation in the session's
thread or a prefetch thread, so these options are carried and merged but change no result.
"""

from __future__ import annotations

from typing import Any


class _OptionsBase:
    """Typed, ``None``-by-default attributes; a class lists them in ``_OPTIONS`` (name -> type)."""

    _OPTIONS: dict[str, type | tuple[type, ...]] = {}

    def __init__(self) -> None:
        for name, kind in self._OPTIONS.items():
            default = kind() if isinstance(kind, type) and issubclass(kind, _OptionsBase) else None
            object.__setattr__(self, name, default)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._OPTIONS:
            raise AttributeError(f"{type(self).__name__} has no option {name!r}")
        kind = self._OPTIONS[name]
        if value is not None and not isinstance(value, kind):
            raise TypeError(
                f"{type(self).__name__}.{name} must be {kind}, got {value!r} "
                f"({type(value).__name__})"
            )
        if isinstance(value, bool) and kind is int:
            raise TypeError(f"{type(self).__name__}.{name} must be an int, got {value!r}")
        object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(
            getattr(self, n) == getattr(other, n) for n in self._OPTIONS
        )

    def __repr__(self) -> str:
        set_ = {n: getattr(self, n) for n in self._OPTIONS if getattr(self, n) is not None}
        return f"{type(self).__name__}({set_})"

    def _merge_into(self, result: _OptionsBase, other: _OptionsBase, path: str) -> None:
        for name in self._OPTIONS:
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, _OptionsBase):
                mine._merge_into(getattr(result, name), theirs, f"{path}{name}.")
            elif mine is not None and theirs is not None and mine != theirs:
                raise ValueError(
                    f"Cannot merge incompatible values ({mine!r} and {theirs!r}) of option: "
                    f"{path}{name}"
                )
            else:
                object.__setattr__(result, name, mine if mine is not None else theirs)


class OptimizationOptions(_OptionsBase):
    """Which static optimizations of the pipeline graph TensorFlow may apply."""

    _OPTIONS = {
        "apply_default_optimizations": bool,
        "autotune": bool,
        "autotune_buffers": bool,
        "autotune_cpu_budget": int,
        "filter_fusion": bool,
        "filter_with_random_uniform_fusion": bool,
        "hoist_random_uniform": bool,
        "map_and_batch_fusion": bool,
        "map_and_filter_fusion": bool,
        "map_fusion": bool,
        "map_parallelization": bool,
        "map_vectorization": bool,
        "noop_elimination": bool,
        "parallel_batch": bool,
        "shuffle_and_repeat_fusion": bool,
    }


class ThreadingOptions(_OptionsBase):
    """The thread pool a pipeline runs in."""

    _OPTIONS = {"max_intra_op_parallelism": int, "private_threadpool_size": int}


class StatsOptions(_OptionsBase):
    """Whether and where a pipeline records statistics."""

    _OPTIONS = {
        "aggregator": object,
        "counter_prefix": str,
        "latency_all_edges": bool,
        "prefix": str,
    }


class DistributeOptions(_OptionsBase):
    """How a pipeline is split across workers."""

    _OPTIONS = {"auto_shard": bool, "num_devices": int}


class Options(_OptionsBase):
    """A pipeline's options (TensorFlow 1.15's ``tf.data.Options``)."""

    _OPTIONS = {
        "experimental_deterministic": bool,
        "experimental_distribute": DistributeOptions,
        "experimental_optimization": OptimizationOptions,
        "experimental_slack": bool,
        "experimental_stats": StatsOptions,
        "experimental_threading": ThreadingOptions,
    }

    def merge(self, options: Options) -> Options:
        """A new Options holding what ``self`` or ``options`` set; conflicting values raise."""
        if not isinstance(options, Options):
            raise TypeError(f"Options.merge expects tf.data.Options, got {options!r}")
        result = Options()
        self._merge_into(result, options, "")
        return result
