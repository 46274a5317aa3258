#!/usr/bin/env python3
"""Writes the small .npy files that tests/unit/npy_test.cc reads, with NumPy itself (an independent
writer). Run from anywhere: python3 tests/data/npy/gen_npy.py. Values are simple enough to check by
hand; the files are committed, so the tests do not need NumPy."""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, array, version=None):
    path = os.path.join(HERE, name)
    with open(path, "wb") as f:
        if version is None:
            np.save(f, array)
        else:
            np.lib.format.write_array(f, array, version=version)
    return path


def main():
    a23 = np.array([[-0.5, -0.25, 0.0], [0.25, 0.5, 0.75]], dtype="<f8")
    save("f64_2x3.npy", a23)
    save("f32_3.npy", np.array([1.5, -2.25, 0.1], dtype="<f4"))
    save("f64_scalar.npy", np.array(3.25, dtype="<f8"))
    save("f64_0x4.npy", np.zeros((0, 4), dtype="<f8"))
    save("f64_nonfinite.npy", np.array([np.nan, np.inf, -np.inf, -0.0], dtype="<f8"))
    save("f64_2x3_v2.npy", a23, version=(2, 0))
    save("f64_2x1x2.npy", np.arange(4, dtype="<f8").reshape(2, 1, 2))
    # Files the reader must reject.
    save("f64_big_endian.npy", a23.astype(">f8"))
    save("f64_fortran.npy", np.asfortranarray(a23))
    save("i64_2x3.npy", np.arange(6, dtype="<i8").reshape(2, 3))
    full = save("f64_truncated.npy", a23)
    with open(full, "rb") as f:
        data = f.read()
    with open(full, "wb") as f:
        f.write(data[:-3])


if __name__ == "__main__":
    main()
