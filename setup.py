# Builds the extension fastt._C by driving CMake (root CMakeLists.txt with
# FASTT_BUILD_PYTHON=ON) and places it where setuptools expects it, so
# `pip install .`, `pip install -e .` and
# `python setup.py build_ext --inplace` (puts _C into python/fastt/) all work.
# CUDA is off unless FASTT_CUDA=1; FASTT_BUILD_DIR overrides the build dir.
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        out_dir = Path(self.get_ext_fullpath(ext.name)).resolve().parent
        out_dir.mkdir(parents=True, exist_ok=True)
        build_dir = Path(os.environ.get("FASTT_BUILD_DIR",
                                        ROOT / "build-pip")).resolve()
        build_dir.mkdir(parents=True, exist_ok=True)
        cuda = os.environ.get("FASTT_CUDA", "0") not in ("0", "", "OFF")
        cfg = ["-DCMAKE_BUILD_TYPE=Release",
               "-DFASTT_BUILD_PYTHON=ON",
               "-DFASTT_BUILD_TESTS=OFF",
               "-DFASTT_BUILD_BENCH=OFF",
               "-DFASTT_BUILD_EXAMPLES=OFF",
               f"-DFASTT_CUDA={'ON' if cuda else 'OFF'}",
               f"-DFASTT_PYTHON_OUTPUT_DIR={out_dir}",
               f"-DPython_EXECUTABLE={sys.executable}"]
        try:
            import pybind11
            cfg.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass
        ninja = shutil.which("ninja")
        cache = build_dir / "CMakeCache.txt"
        if not cache.exists():
            if ninja:
                cfg += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"]
        elif ninja and "CMAKE_GENERATOR:INTERNAL=Ninja" in cache.read_text():
            # pip's isolated build envs come and go: point the cached build
            # at this run's ninja.
            cfg.append(f"-DCMAKE_MAKE_PROGRAM={ninja}")
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build_dir)]
                              + cfg)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", str(build_dir),
                               "--target", "_C", "-j", jobs])
        built = self.get_ext_fullpath(ext.name)
        if not Path(built).exists():
            raise RuntimeError(f"CMake did not produce {built}")


setup(
    ext_modules=[CMakeExtension("fastt._C")],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' staging dir; keeps it out of other build trees.
    options={"build": {"build_base": "build-pip/setuptools"}},
)
