import torch

from plang.runtime.device_tensor import DeviceTensor
from plang.runtime.tensor_map import OverlapMap, footprint


class T:
    def __init__(self, name):
        self.name, self.done = name, False

    def __repr__(self):
        return self.name


def access(m, tensor, task, write):
    deps = set()
    m.access(footprint(tensor), task, write, deps)
    return deps


def test_footprint_of_views():
    x = torch.zeros(8, 8, dtype=torch.float32)
    base = x.untyped_storage().data_ptr()
    assert footprint(x) == (base, 0, 256)
    assert footprint(x[2:4]) == (base, 64, 128)
    # a column is conservatively its [min, max] byte interval
    assert footprint(x[:, 1]) == (base, 4, 7 * 32 + 8)
    assert footprint(x.t()) == (base, 0, 256)
    assert footprint(DeviceTensor(x)) == footprint(x)
    assert footprint(x[:0]) is None and footprint(3) is None


def test_raw_war_waw_on_overlapping_ranges():
    m, x = OverlapMap(), torch.zeros(16)
    w1, r1, r2, w2 = T("w1"), T("r1"), T("r2"), T("w2")
    assert access(m, x[0:8], w1, True) == set()
    assert access(m, x[4:6], r1, False) == {w1}          # RAW
    assert access(m, x[6:12], r2, False) == {w1}         # RAW on the overlap only
    assert access(m, x[5:7], w2, True) == {w1, r1, r2}   # WAW + WAR
    assert access(m, x[0:2], T("r3"), False) == {w1}     # untouched part keeps w1


def test_disjoint_regions_do_not_conflict():
    m, x = OverlapMap(), torch.zeros(4, 16)
    tasks = [T(f"w{i}") for i in range(4)]
    for i, t in enumerate(tasks):
        assert access(m, x[i], t, True) == set()
    assert access(m, x[1:3], T("r"), False) == {tasks[1], tasks[2]}
    assert access(m, torch.zeros(4), T("other"), True) == set()


def test_finished_tasks_are_not_dependencies_and_get_swept():
    m, x = OverlapMap(), torch.zeros(4096)
    for i in range(1000):
        t = T(f"w{i}")
        access(m, x[i:i + 1], t, True)
        t.done = True
    assert len(m) < 200
    assert access(m, x, T("all"), True) == set()
