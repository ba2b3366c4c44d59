"""What machine a benchmark ran on, printed first by every benchmark."""
from __future__ import annotations

import os
import platform
import resource


def describe_machine() -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import numpy
    import onnxruntime

    return (f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"numpy {numpy.__version__}, onnxruntime {onnxruntime.__version__}")


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_averages() -> str:
    """The 1, 5 and 15 minute load averages, printed beside every timing: others may share the cores."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
