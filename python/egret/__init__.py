"""egret: event-driven simulation of activity-sparse recurrent networks (continuous-time EGRU)
with exact event-based gradients.

The compiled core is `egret._egret` (pybind11). Build it with the project's CMake
(`bash scripts/build.sh`); then `PYTHONPATH=build/python /usr/bin/python3 -c "import egret"`.
"""
from ._egret import Network  # noqa: F401

__all__ = ["Network"]
