"""Builds egret's Python extension (egret._egret) with the project's CMake for `pip install .`.

The C++ dependencies come from Debian (bash scripts/setup.sh); nothing is downloaded. Set
EGRET_NATIVE=OFF for a build that does not use this machine's CPU extensions (-march=native).
"""
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).parent.resolve()


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        # One level below the repository, as build/ is: compiled with the same flags, the two
        # builds' files then have the same compiler command relative to their folders, and
        # scripts/test.sh lets ccache serve this build from the release build's objects.
        build = ROOT / "build-pip"
        build.mkdir(parents=True, exist_ok=True)
        subprocess.check_call([
            "cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
            "-DEGRET_BUILD_TESTS=OFF", "-DEGRET_BUILD_BENCH=OFF",
            f"-DEGRET_NATIVE={os.environ.get('EGRET_NATIVE', 'ON')}",
            f"-DPython_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", str(build), "--target", "_egret", "-j",
                               str(os.cpu_count() or 2)])
        built = list((build / "python" / "egret").glob("_egret*.so"))
        if len(built) != 1:
            raise RuntimeError(f"egret: expected one _egret*.so in {build}/python/egret, found {built}")
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], dest)


setup(
    packages=["egret"],
    package_dir={"": "python"},
    package_data={"egret": ["py.typed", "*.pyi"]},
    ext_modules=[Extension("egret._egret", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
