"""The process-wide backend type, as the reference's harnesses set and reset it."""

from __future__ import annotations

import pytest

from plang import backend


def test_set_once_repeat_same_reset():
    backend.reset_for_testing()
    assert not backend.is_backend_configured()
    with pytest.raises(ValueError, match="no backend type is configured"):
        backend.get_backend_type()
    backend.set_backend_type(backend.BackendType.Ascend950)
    backend.set_backend_type(backend.BackendType.Ascend950)
    assert backend.get_backend_type() is backend.BackendType.Ascend950
    with pytest.raises(ValueError, match="cannot change to Ascend910B"):
        backend.set_backend_type(backend.BackendType.Ascend910B)
    backend.reset_for_testing()
    backend.set_backend_type(backend.BackendType.Ascend910B)
    assert backend.get_backend_instance(backend.BackendType.Ascend950).get_type_name() != \
        backend.get_backend_instance(backend.BackendType.Ascend910B).get_type_name()
    backend.reset_for_testing()
    with pytest.raises(TypeError, match="takes a BackendType"):
        backend.set_backend_type("910B")
