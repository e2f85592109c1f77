"""The tuning cache: the tunables `tune` chose, by `tuning_key` (the operator class, the
device, every parameter that is not a searched tunable), in memory and as sealed JSON
files under ``<cache root>/tuning/``. A disk entry holds for the compiler code that timed
it (`jit.disk_cache.code_tag`, as the JIT cache's entries): other codegen makes other
kernels, whose fastest tiles may differ."""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import threading
from enum import Enum
from pathlib import Path
from typing import Any

from .. import cache_root as roots
from ..dtypes import DataType
from ..jit.disk_cache import code_tag
from ..target import Device
from ..version import __version__
from .operator import Operator, key_value

_FORMAT = 1


@functools.lru_cache(maxsize=None)
def _class_digest(cls: type) -> str:
    """A hash of the operator class's source (an edited operator is tuned again)."""
    try:
        text = inspect.getsource(cls)
    except (OSError, TypeError):
        text = cls.__qualname__
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def tuning_key(op: Operator, dev: Device) -> tuple:
    """What a tuning is stored under: the operator class (name and source), the device (its
    name and ISA), the trace, and every parameter that is not a tunable (so the
    `array_key()` parts with the tunables unset, and the host dims)."""
    decl = op.declaration
    fixed = tuple((n, key_value(vars(op)[n])) for n, p in decl.params.items()
                  if not (p.tunable and p.init and n not in op._given))
    return (f"{type(op).__module__}.{type(op).__qualname__}", _class_digest(type(op)), dev.name,
            dev.isa.spec(), repr(op.trace), fixed)


def _encode(value: Any) -> Any:
    if isinstance(value, Enum):
        return {"enum": value.name}
    if isinstance(value, DataType):
        return {"dtype": value.name}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"a tuned value {value!r} cannot be stored (give tunables int, float, bool, str, "
                    f"Enum or dtype values)")


def _decode(op_class: type, name: str, value: Any) -> Any:
    if isinstance(value, dict) and "enum" in value:
        return op_class.declaration.params[name].domain[value["enum"]]
    if isinstance(value, dict) and "dtype" in value:
        return DataType.from_name(value["dtype"])
    return value


class TuningCache:
    """Tuned tunables by `tuning_key`: in memory, and as sealed JSON files under
    ``<cache root>/tuning/`` (the JIT cache's root, `plang.cache_root`: ``$PLANG_CACHE_DIR``,
    else ``$XDG_CACHE_HOME/plang``, else ``~/.cache/plang``; memory only with
    ``PLANG_DISK_CACHE=0``). Files are written atomically and sealed with the root's secret;
    a corrupt or foreign one is a miss, replaced by the next store."""

    def __init__(self) -> None:
        self._memory: dict[tuple, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self.version = 0  # bumped by every store and clear: what a call memoized is stale

    @staticmethod
    def _store() -> roots.Store | None:
        root = roots.root()
        return None if root is None else root.sub("tuning")

    @classmethod
    def path(cls, key: tuple) -> Path | None:
        """The file a key is stored in, or None without a disk cache."""
        store = cls._store()
        identity = repr((_FORMAT, __version__, code_tag(), key)).encode()
        return None if store is None else store.name("tune", identity, ".json")

    def get(self, op: Operator, dev: Device) -> tuple[dict[str, Any], str] | None:
        """``(tunables, "memory" | "disk")`` for `op` on `dev`, or None."""
        key = tuning_key(op, dev)
        hit = self._memory.get(key)
        if hit is not None:
            return dict(hit), "memory"
        store = self._store()
        path = self.path(key)
        if store is None or path is None or not path.is_file():
            return None
        try:
            sealed = json.loads(path.read_text())
            if not store.verify(sealed["data"].encode(), sealed["seal"]):
                return None
            entry = json.loads(sealed["data"])
            if entry["format"] != _FORMAT or entry["key"] != repr(key):
                return None
            tunables = {n: _decode(type(op), n, v) for n, v in entry["tunables"].items()}
        except (ValueError, KeyError, TypeError, AttributeError, OSError):
            return None  # corrupt: the next store replaces it
        with self._lock:
            self._memory[key] = tunables
        return dict(tunables), "disk"

    def lookup(self, op: Operator, dev: Device) -> dict[str, Any] | None:
        """The tuned tunables for `op` on `dev`, or None."""
        hit = self.get(op, dev)
        return None if hit is None else hit[0]

    def store(self, op: Operator, dev: Device, tunables: dict[str, Any], summary: str = "") -> None:
        """Keep `tunables` for `op` on `dev`, in memory and on disk."""
        key = tuning_key(op, dev)
        with self._lock:
            self._memory[key] = dict(tunables)
            self.version += 1
        store, path = self._store(), self.path(key)
        if store is None or path is None:
            return
        data = json.dumps({"format": _FORMAT, "plang": __version__, "key": repr(key), "summary": summary,
                           "tunables": {n: _encode(v) for n, v in tunables.items()}})
        try:
            roots.write_atomic(path, json.dumps({"data": data, "seal": store.seal(data.encode())}).encode())
        except OSError as e:
            roots.warn_once("tuning", f"the tuning cache {path.parent} cannot be written ({e}); "
                                      f"tunings are kept in memory only")

    def clear(self) -> None:
        """Forget the in-memory entries (the disk files stay)."""
        with self._lock:
            self._memory.clear()
            self.version += 1


TUNING_CACHE = TuningCache()
