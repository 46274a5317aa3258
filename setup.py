"""Builds the extension denote._denote with the project's CMake (the `denote_python` target) and
packages python/denote/ around it. Works offline: pip install --no-build-isolation .

Environment:
  DENOTE_CMAKE_BUILD_DIR  an existing (or new) CMake build directory to build the target in; default:
                          a fresh one under build/setuptools/ (Release, no tests, no benchmarks).
  DENOTE_BUILD_JOBS       parallel build jobs (default 2).
setuptools' own scratch files go under build/setuptools/ (never into the CMake build's top level).
"""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
SCRATCH = os.path.join(ROOT, "build", "setuptools")


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("DENOTE_CMAKE_BUILD_DIR") or os.path.join(SCRATCH, "cmake")
        build_dir = os.path.abspath(build_dir)
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            cmd = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DDENOTE_BUILD_TESTS=OFF",
                   "-DDENOTE_BUILD_BENCH=OFF", "-DPython_EXECUTABLE=" + sys.executable]
            if shutil.which("ninja"):
                cmd += ["-G", "Ninja"]
            subprocess.check_call(cmd)
        jobs = os.environ.get("DENOTE_BUILD_JOBS", "2")
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "denote_python", "-j", jobs])
        built = glob.glob(os.path.join(build_dir, "python", "denote", "_denote*.so"))
        if not built:
            raise RuntimeError("denote: the CMake build made no python/denote/_denote*.so in " + build_dir)
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


os.makedirs(SCRATCH, exist_ok=True)
setup(
    ext_modules=[CMakeExtension("denote._denote")],
    cmdclass={"build_ext": CMakeBuild},
    options={
        "build": {"build_base": SCRATCH},
        "egg_info": {"egg_base": SCRATCH},
        "bdist_wheel": {"bdist_dir": os.path.join(SCRATCH, "bdist")},
    },
    zip_safe=False,
)
