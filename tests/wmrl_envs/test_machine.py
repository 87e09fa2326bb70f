"""A comparison or a benchmark records what it ran on, so a figure that does not reproduce elsewhere can be traced."""

from __future__ import annotations

import json
import platform
from pathlib import Path

import numpy

from wmrl_envs.machine import LIBRARIES, machine_facts


def test_facts_name_the_cpu_its_vector_extensions_python_and_library_versions(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu sse2 avx avx2 fma\n\n"
        "processor\t: 1\nmodel name\t: other\nflags\t\t: avx512f\n"
    )
    facts = machine_facts(cpuinfo)
    assert facts["cpu"] == "AMD EPYC 7B13" and facts["simd"] == ["avx", "avx2", "fma"]  # the first CPU's
    assert facts["python"] == platform.python_version() and facts["cpus"] >= 1
    assert facts["kernel"] == platform.release() and len(facts["load_avg"]) == 3  # what else ran beside it
    assert set(facts["libraries"]) == set(LIBRARIES) and facts["libraries"]["numpy"] == numpy.__version__
    json.dumps(facts)  # it goes into the report as it is


def test_a_machine_without_cpuinfo_still_reports_the_rest(tmp_path: Path) -> None:
    facts = machine_facts(tmp_path / "absent")
    assert facts["simd"] == [] and facts["libraries"]["scikit-learn"]


def test_a_benchmark_names_the_libraries_it_depends_on_and_a_missing_one_is_none() -> None:
    facts = machine_facts(libraries=("numpy", "no-such-distribution"))
    assert facts["libraries"] == {"numpy": numpy.__version__, "no-such-distribution": None}
