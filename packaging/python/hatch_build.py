"""The wheel's platform tag: py3-none-<TRACEFORGE_WHEEL_PLATFORM>.

The wheel holds no Python extension, only a static Go binary, so any
Python 3 with any ABI can use it; only the platform matters. hatchling
infers a tag from the interpreter that builds, which is wrong when
cross-building, so make dist names it (e.g.
manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64).
"""

import os

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class PlatformTagHook(BuildHookInterface):
    def initialize(self, version, build_data):
        if self.target_name != "wheel":
            return
        platform = os.environ.get("TRACEFORGE_WHEEL_PLATFORM")
        if not platform:
            raise RuntimeError("TRACEFORGE_WHEEL_PLATFORM is not set: build the wheel with make dist")
        build_data["tag"] = f"py3-none-{platform}"
        build_data["pure_python"] = False
