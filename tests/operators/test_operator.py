"""`Operator`: the seed's `Scale` example (E0), construction, replace (R1-R6), copy,
resolved, layout, keys, validate / compatible, `Unresolvable`, `library=True`, and the
current-device context of `plang.target`."""

import pytest
from seed_ops import Scale

from plang.operators import Operator, Unresolvable, param
from plang.target import Device, ensure_current_device, get_current_device, set_current_device


class X(Operator):
    M: int = param()
    K: int = param(derive=lambda op: op.M * 2)
    N: int = param(default=lambda op: op.M + 1)


device = Device(clusters=2)
other = Device(clusters=3)


def test_seed_example():
    op = Scale(M=1024)
    done = op.resolved(device)
    assert repr(op) == "Scale(M=1024, factor=1.0, tile=None)"
    assert repr(done) == "Scale(M=1024, factor=1.0, tile=16)"
    assert done.count == 256
    assert done.array_key() == (Scale, ("device", device.name), ("tile", 16))
    assert Scale(M=2048).resolved(device).array_key() == done.array_key()
    assert Scale(M=2048).resolved(device).design_key() != done.design_key()
    assert done.design_key() == (Scale, (("device", "cpu-2x1c2v"), ("trace", None), ("M", 1024),
                                         ("factor", 1.0), ("tile", 16)))
    assert op.array_key() == (Scale, ("device", None), ("tile", None))


def test_construction_errors():
    with pytest.raises(TypeError, match=r"Scale\(\) needs \['M'\]"):
        Scale()
    with pytest.raises(TypeError, match=r"Scale\(\) takes no argument \['bogus'\]"):
        Scale(M=1, bogus=2)
    with pytest.raises(TypeError):
        Scale(1024)


def test_a_given_derive_value_must_agree():
    assert X(M=4, K=8).K == 8
    with pytest.raises(ValueError, match="X: K=9 but its derive gives 8"):
        X(M=4, K=9)


def test_replace_rules():
    r1 = X(M=4).replace(M=5)
    assert (r1.K, r1.N) == (10, 6)  # R1: computed again
    assert X(M=4, K=8).replace(M=5, K=None).K == 10  # R2: None computes it again
    assert X(M=4, N=9).replace(M=5).N == 9  # R3: a given value is kept
    with pytest.raises(ValueError, match="K=8 but its derive gives 10"):  # R4
        X(M=4, K=8).replace(M=5)
    done = Scale(M=1024).resolved(device)
    moved = done.replace(M=2048)  # R5
    assert not moved.is_resolved and moved.array_key()[1] == ("device", device.name)
    assert repr(moved.resolved(device)) == "Scale(M=2048, factor=1.0, tile=16)"
    with pytest.raises(TypeError, match=r"Scale has no parameter \['bogus'\]"):  # R6
        done.replace(bogus=1)


def test_resolved_memoizes_and_goes_back_to_the_unresolved():
    op = Scale(M=1024)
    done = op.resolved(device)
    assert done.resolved(device) is done and done.is_resolved and done.resolved_for == device
    again = done.resolved(other)
    assert again._unresolved is op and again.resolved_for == other
    assert done.replace(factor=2.0).resolved(other).factor == 2.0
    copy = done.copy()
    assert copy is not done and copy.resolved(device) is copy


def test_resolve_sees_the_device_current():
    seen = []

    class Op(Scale):
        def resolve(self, dev):
            seen.append(get_current_device())
            return super().resolve(dev)

    Op(M=8).resolved(other)
    assert seen == [other]


def test_resolve_must_return_a_copy_and_fill_the_tunables():
    class Same(Scale):
        def resolve(self, dev):
            return self

    class Lazy(Scale):
        def resolve(self, dev):
            return self.replace()

    with pytest.raises(TypeError, match=r"Same.resolve\(\) must return a copy, self.replace\(...\)"):
        Same(M=8).resolved(device)
    with pytest.raises(Unresolvable, match=r"Lazy.resolve\(\) left \['tile'\] unset for Device"):
        Lazy(M=8).resolved(device)
    assert issubclass(Unresolvable, ValueError)


def test_validate_runs_at_construction_and_compatible_on_the_resolved_copy():
    class Checked(Scale):
        def validate(self):
            if self.M % 4:
                raise ValueError("M must be a multiple of 4")

        def compatible(self):
            if self.M % self.tile:
                raise ValueError(f"tile={self.tile} does not divide M={self.M}")

    with pytest.raises(ValueError, match="multiple of 4"):
        Checked(M=6)
    with pytest.raises(ValueError, match="tile=16 does not divide M=40"):
        Checked(M=40).resolved(device)
    assert Checked(M=48).resolved(device).tile == 16


def test_layout_holds_only_the_key():
    done = Scale(M=1024).resolved(device)
    view = done.layout()
    assert view.tile == 16 and view.trace is None
    with pytest.raises(AttributeError, match=r"Scale.M is not part of the cores' layout"):
        view.M
    with pytest.raises(AttributeError, match="Scale.M"):
        view.bound["x"].shape
    assert view.bound["x"].obj_shape == (16,)


def test_bound_and_trace():
    done = Scale(M=1024).resolved(device)
    assert list(done.bound) == ["x", "y", "count"] and done.bound["count"] == 256
    assert done.bound["x"].shape == (1024,) and done.bound["x"].obj_shape == (16,)
    traced = Scale(M=8, trace="lane0").resolved(device)
    assert traced.array_key()[-1] == ("trace", "lane0")
    assert ("trace", "lane0") in traced.design_key()[1]


def test_library_classes():
    class Library(Operator, library=True):
        pass

    class Concrete(Library):
        M: int = param()

    with pytest.raises(TypeError, match="Library is an operator library; subclass it"):
        Library()
    assert list(Concrete.declaration.params) == ["M"] and Concrete(M=1).M == 1
    assert not Concrete.reference_only


def test_device_name_and_current_device():
    assert Device(clusters=2).name == "cpu-2x1c2v" == Device(clusters=2).name
    assert Device(clusters=4, aiv_per_cluster=1).name == "cpu-4x1c1v"
    assert Device(clusters=2, dma_channels=4).name.startswith("cpu-2x1c2v-")
    assert Device(clusters=2, dma_channels=4).name != Device(clusters=2).name
    with pytest.raises(ValueError, match="dma_channels"):
        Device(dma_channels=0)
    before = get_current_device()
    with set_current_device(other) as dev:
        assert dev is other and get_current_device() is other
        with set_current_device(device):
            assert get_current_device() is device
        assert get_current_device() is other
    assert get_current_device() == before
    with pytest.raises(TypeError, match="takes a plang.target.Device"):
        set_current_device("npu2")
    assert isinstance(ensure_current_device(), Device)
