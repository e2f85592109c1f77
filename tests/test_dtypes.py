"""plang.dtypes: every dtype of the reference, its facts, and numpy / torch conversions."""

import ml_dtypes
import numpy as np
import pytest
import torch

from plang import dtypes as dt

REFERENCE_NAMES = ["FP4", "FP8E4M3FN", "FP8E5M2", "FP8E8M0", "FP16", "FP32", "BF16", "HF4", "HF8",
                   "INT4", "INT8", "INT16", "INT32", "INT64", "UINT4", "UINT8", "UINT16", "UINT32",
                   "UINT64", "BOOL", "INDEX", "TASK_ID"]


def test_every_reference_dtype_exists_once():
    assert [d.name for d in dt.ALL_DTYPES] == REFERENCE_NAMES
    for name in REFERENCE_NAMES:
        assert getattr(dt, name) is dt.DataType.from_name(name)


@pytest.mark.parametrize("dtype,bits,is_float,is_int,signed", [
    (dt.FP32, 32, True, False, True), (dt.BF16, 16, True, False, True),
    (dt.FP4, 4, True, False, True),
    (dt.FP8E8M0, 8, True, False, False), (dt.INT4, 4, False, True, True), (dt.UINT16, 16, False, True, False),
    (dt.BOOL, 8, False, False, False), (dt.INDEX, 64, False, True, True),
    (dt.TASK_ID, 64, False, True, False),
])
def test_facts(dtype, bits, is_float, is_int, signed):
    assert (dtype.bits, dtype.is_float, dtype.is_int, dtype.signed) == (bits, is_float, is_int, signed)


@pytest.mark.parametrize("dtype,np_dtype", [
    (dt.FP32, np.float32), (dt.FP16, np.float16), (dt.BF16, ml_dtypes.bfloat16),
    (dt.FP8E4M3FN, ml_dtypes.float8_e4m3fn), (dt.FP8E5M2, ml_dtypes.float8_e5m2), (dt.INT8, np.int8),
    (dt.UINT32, np.uint32), (dt.INT4, ml_dtypes.int4), (dt.BOOL, np.bool_),
])
def test_numpy_round_trip(dtype, np_dtype):
    assert dtype.to_numpy() == np.dtype(np_dtype)
    assert dt.DataType.from_numpy(np_dtype) is dtype


@pytest.mark.parametrize("dtype,torch_dtype", [
    (dt.FP32, torch.float32), (dt.FP16, torch.float16), (dt.BF16, torch.bfloat16),
    (dt.INT8, torch.int8), (dt.INT32, torch.int32), (dt.INT64, torch.int64), (dt.UINT8, torch.uint8),
    (dt.BOOL, torch.bool), (dt.FP8E4M3FN, torch.float8_e4m3fn),
])
def test_torch_round_trip(dtype, torch_dtype):
    assert dtype.to_torch() is torch_dtype
    assert dt.DataType.from_torch(torch_dtype) is dtype


def test_unsupported_conversions_raise_type_error():
    with pytest.raises(TypeError, match="HF4 has no numpy counterpart"):
        dt.HF4.to_numpy()
    with pytest.raises(TypeError, match="FP4 has no torch counterpart"):
        dt.FP4.to_torch()
    with pytest.raises(TypeError, match="torch dtype torch.complex64 has no plang counterpart"):
        dt.DataType.from_torch(torch.complex64)
    with pytest.raises(TypeError, match="unknown dtype 'FP33'"):
        dt.DataType.from_name("FP33")


def test_dtypes_pickle_as_singletons():
    import pickle

    assert pickle.loads(pickle.dumps(dt.BF16)) is dt.BF16
