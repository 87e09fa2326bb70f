"""Size a cluster before renting it: compute and wall time per GRPO step, real execution vs WMRL, vs sandboxes.

A training step at the paper's scale has G groups x K trajectories x up to T turns; each
turn is a generation and its scoring. Real-execution GRPO scores every turn with a run on
a sandbox (up to 1200 s, each on its own GPU); WMRL scores every turn with the world model
and, for the anchor groups (`AnchorScheduler`: ~10% of groups, at least one per step),
with a real run as well. Each step is simulated by list scheduling on shared pools
(`_step_schedule.simulate_step`: turns of a trajectory in order, everything else
concurrent, first come first served), for 1, 2, 4, ... 1024 sandboxes. By default the
trajectories meet after every turn, as in ``wmrl train``, which generates each turn for all
trajectories in one batch; ``--no-turn-barrier`` models a trainer whose trajectories run
their turns independently.

Two scenarios by default. ``measured`` takes this machine's figures: run durations drawn
from the real runs of ``results/world_models_corpus.jsonl`` (else the mean in
``results/world_models.json``, else the bwrap scikit-learn median in
``results/executor_overhead.json``) and the world model's cost per call from
``results/world_models.json``. ``paper`` is the paper's scale: every run uses its 1200 s,
and generation, world-model and update times are assumptions to override with flags.
Every parameter is written with its source.

Crossovers reported: the sandboxes each method needs to reach its own floor (the wall
time with unlimited sandboxes), and the sandboxes beyond which real GRPO is as fast as
WMRL (past it WMRL saves compute, not time). Prints a table, writes
``benchmarks/results/scaling_sim.json``.

    python benchmarks/scaling_sim.py
    python benchmarks/scaling_sim.py --scenario paper --exec-s 600 --wm-s 4 --gen-s 45
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _step_schedule import StepSchedule, Turn, simulate_step

from wmrl_envs.console import note, table
from wmrl_envs.corrections import AnchorScheduler
from wmrl_envs.machine import machine_facts

RESULTS_DIR = Path(__file__).resolve().parent / "results"
OUT = RESULTS_DIR / "scaling_sim.json"
SANDBOXES = tuple(2**k for k in range(11))
METHODS = ("real", "wmrl")
TOLERANCE = 0.05
"""Two wall times within 5% count as equal when finding crossovers."""


@dataclass(frozen=True)
class Scenario:
    """What one step costs; every field's provenance is kept in `sources`."""

    name: str
    exec_samples_s: tuple[float, ...]
    """Durations a real run may take (drawn uniformly, capped at `time_limit_s`)."""
    time_limit_s: float
    gen_s: float
    wm_s: float
    wm_slots: int | None
    wm_on_sandbox: bool = False
    train_s: float = 0.0
    groups: int = 8
    group_size: int = 8
    turns: int = 4
    anchor_fraction: float = 0.1
    steps: int = 100
    gen_slots: int | None = None
    turn_barrier: bool = True
    """Trajectories meet after every turn (one generation batch per turn, as `wmrl train` does)."""
    sources: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.exec_samples_s or min(self.exec_samples_s) < 0:
            raise ValueError(f"scenario {self.name}: run durations must be a non-empty list of seconds >= 0")
        for label in ("groups", "group_size", "turns", "steps"):
            if getattr(self, label) < 1:
                raise ValueError(f"scenario {self.name}: {label} must be at least 1, got {getattr(self, label)}")
        if min(self.gen_s, self.wm_s, self.train_s, self.time_limit_s) < 0:
            raise ValueError(f"scenario {self.name}: times must not be negative")
        if not 0 < self.anchor_fraction <= 1:
            raise ValueError(f"scenario {self.name}: anchor fraction must be in (0, 1], got {self.anchor_fraction}")


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def measured_scenario(results: Path = RESULTS_DIR, world_model: str = "surrogate") -> Scenario:
    """This machine's figures: real run durations and the world model's cost per call, from the results files."""
    sources: dict[str, str] = {}
    wm_report = _read_json(results / "world_models.json") or {}
    corpus = results / "world_models_corpus.jsonl"
    samples: tuple[float, ...] = ()
    if corpus.is_file():
        rows = [json.loads(line) for line in corpus.read_text().splitlines() if line.strip()]
        samples = tuple(float(r["cost"]["wall_s"]) for r in rows if r.get("cost", {}).get("wall_s") is not None)
        sources["exec_samples_s"] = f"measured: wall_s of the {len(samples)} real runs in {corpus.name}"
    if not samples and wm_report.get("corpus", {}).get("mean_real_wall_s"):
        samples = (float(wm_report["corpus"]["mean_real_wall_s"]),)
        sources["exec_samples_s"] = "measured: corpus.mean_real_wall_s in world_models.json"
    if not samples:
        overhead = _read_json(results / "executor_overhead.json") or {}
        medians = [
            r["median_s"] for r in overhead.get("rows", []) if (r["runner"], r["script"]) == ("bwrap", "sklearn")
        ]
        samples = (float(medians[0]) if medians else 3.5,)
        sources["exec_samples_s"] = (
            "measured: bwrap sklearn median in executor_overhead.json" if medians else "assumed: 3.5 s"
        )
    wm = wm_report.get("world_models", {}).get(world_model, {})
    wm_s = wm.get("cost_s") or wm.get("wall_s_per_item")
    if wm_s is None:
        wm_s, sources["wm_s"] = 0.1, f"assumed: 0.1 s ({world_model} not in world_models.json)"
    else:
        sources["wm_s"] = f"measured: world_models.json, {world_model} cost per prediction"
    wm_slots = int(wm.get("concurrency") or 1)
    sources["wm_slots"] = f"measured: concurrency of the {world_model} pass in world_models.json"
    sources["gen_s"] = "assumed: a small local policy, 0.5 s per turn"
    sources["train_s"] = "FINDINGS.md: one TRL GRPO step of a tiny model on CPU, ~4.5 s"
    sources["time_limit_s"] = "world_models.json time_limit_s" if "time_limit_s" in wm_report else "assumed"
    return Scenario(
        name="measured",
        exec_samples_s=samples,
        time_limit_s=float(wm_report.get("time_limit_s", 300.0)),
        gen_s=0.5,
        wm_s=float(wm_s),
        wm_slots=wm_slots,
        wm_on_sandbox=world_model == "proxy",
        train_s=4.5,
        sources=sources,
    )


def paper_scenario() -> Scenario:
    """The paper's scale: 8 x 8 x 4 turns, every real run taking its whole 1200 s (worst case, for sizing)."""
    return Scenario(
        name="paper",
        exec_samples_s=(1200.0,),
        time_limit_s=1200.0,
        gen_s=60.0,
        wm_s=10.0,
        wm_slots=64,
        train_s=120.0,
        sources={
            "exec_samples_s": "paper: each run up to 1200 s on its own GPU; worst case, every run uses it all",
            "time_limit_s": "paper: 1200 s",
            "gen_s": "assumed: ~2k tokens per turn at ~35 tokens/s per sequence (Qwen3.5-4B on vLLM, 64 in flight)",
            "wm_s": "assumed: one LLM world-model call (~4k prompt tokens, ~200 out) on a vLLM server under load",
            "wm_slots": "assumed: 64 concurrent requests on the world-model server",
            "train_s": "assumed: one policy update over the step's 256 turns",
        },
    )


def step_turns(scenario: Scenario, anchors: set[int] | None, durations: np.ndarray) -> tuple[list[list[Turn]], list]:
    """The step's trajectories: `anchors` None means real GRPO (every group real); returns them and their groups."""
    trajectories, group_of = [], []
    for g in range(scenario.groups):
        real = anchors is None or g in anchors
        predicted = anchors is not None
        for k in range(scenario.group_size):
            trajectories.append(
                [
                    Turn(
                        gen_s=scenario.gen_s,
                        exec_s=float(durations[g, k, t]) if real else None,
                        wm_s=scenario.wm_s if predicted else None,
                        wm_on_sandbox=scenario.wm_on_sandbox,
                    )
                    for t in range(scenario.turns)
                ]
            )
            group_of.append(g)
    return trajectories, group_of


def _turn_s(turn: Turn) -> float:
    return turn.gen_s + max((s for _, s in turn.jobs()), default=0.0)


def _bounds(schedule: StepSchedule, trajectories: list[list[Turn]], sandboxes: int | None, scenario: Scenario):
    if scenario.turn_barrier:  # each turn lasts as long as its slowest trajectory's
        longest = max(map(len, trajectories))
        chain = sum(max(_turn_s(traj[t]) for traj in trajectories if len(traj) > t) for t in range(longest))
    else:
        chain = max(sum(_turn_s(t) for t in traj) for traj in trajectories)
    bounds = {"turn chain": chain}
    if sandboxes is not None:
        bounds["sandboxes"] = schedule.busy_s["sandbox"] / sandboxes
    if scenario.wm_slots is not None and not scenario.wm_on_sandbox:
        bounds["world-model server"] = schedule.busy_s["world_model"] / scenario.wm_slots
    return bounds


def simulate(scenario: Scenario, method: str, sandboxes: int | None, replicates: int, seed: int) -> dict[str, Any]:
    """Mean figures of `replicates` steps of `method` with `sandboxes` (None: unlimited)."""
    scheduler = AnchorScheduler(scenario.anchor_fraction, seed=seed)
    samples = np.asarray(scenario.exec_samples_s)
    per_step: list[dict[str, float]] = []
    votes: dict[str, int] = {}
    for step in range(replicates):
        rng = np.random.default_rng([seed, step])  # the same run durations for every method and pool size
        shape = (scenario.groups, scenario.group_size, scenario.turns)
        durations = np.minimum(rng.choice(samples, size=shape), scenario.time_limit_s)
        anchors = set(scheduler.choose(scenario.groups, step)) if method == "wmrl" else None
        trajectories, group_of = step_turns(scenario, anchors, durations)
        slots = {"sandbox": sandboxes, "world_model": scenario.wm_slots, "generation": scenario.gen_slots}
        schedule = simulate_step(trajectories, slots, turn_barrier=scenario.turn_barrier)
        bounds = _bounds(schedule, trajectories, sandboxes, scenario)
        label = max(bounds, key=bounds.get)
        votes[label] = votes.get(label, 0) + 1
        wm_path = [f for f, g in zip(schedule.finish_s, group_of, strict=True) if anchors is None or g not in anchors]
        per_step.append(
            {
                "makespan_s": schedule.makespan_s,
                "sandbox_busy_s": schedule.busy_s["sandbox"],
                "wm_busy_s": schedule.busy_s["world_model"],
                "gen_busy_s": schedule.busy_s["generation"],
                "sandbox_wait_s": schedule.waited_s["sandbox"],
                "executions": sum(t.exec_s is not None for traj in trajectories for t in traj),
                "anchor_groups": len(anchors) if anchors is not None else scenario.groups,
                "wm_only_finish_s": max(wm_path, default=0.0),
            }
        )
    mean = {key: statistics.fmean(step[key] for step in per_step) for key in per_step[0]}
    step_wall = mean["makespan_s"] + scenario.train_s
    row: dict[str, Any] = {
        "method": method,
        "sandboxes": sandboxes,
        "step_wall_s": step_wall,
        "run_wall_h": step_wall * scenario.steps / 3600,
        "executions_per_step": mean["executions"],
        "sandbox_busy_s_per_step": mean["sandbox_busy_s"],
        "sandbox_reserved_s_per_step": None if sandboxes is None else sandboxes * step_wall,
        "sandbox_utilization": None if sandboxes is None else mean["sandbox_busy_s"] / (sandboxes * step_wall),
        "run_sandbox_h": mean["sandbox_busy_s"] * scenario.steps / 3600,
        "wm_busy_s_per_step": mean["wm_busy_s"],
        "gen_busy_s_per_step": mean["gen_busy_s"],
        "sandbox_queue_s_per_step": mean["sandbox_wait_s"],
        "anchor_groups_per_step": mean["anchor_groups"],
        "bottleneck": max(votes, key=votes.get),
    }
    if method == "wmrl":
        row["wm_only_trajectories_done_s"] = mean["wm_only_finish_s"]
    return row


def crossovers(rows: list[dict[str, Any]], floors: dict[str, float]) -> dict[str, Any]:
    """Sandboxes each method needs to reach its floor, and beyond which real GRPO is as fast as WMRL."""
    by = {(r["method"], r["sandboxes"]): r["step_wall_s"] for r in rows}
    sizes = sorted({r["sandboxes"] for r in rows})
    out: dict[str, Any] = {}
    for method in METHODS:
        floor = floors[method]
        out[f"{method}_saturates_at"] = next((s for s in sizes if by[(method, s)] <= floor * (1 + TOLERANCE)), None)
    out["real_matches_wmrl_from"] = next(
        (s for s in sizes if by[("real", s)] <= by[("wmrl", s)] * (1 + TOLERANCE)), None
    )
    out["real_sandboxes_for_wmrl_wall"] = {
        str(s): next((r for r in sizes if by[("real", r)] <= by[("wmrl", s)] * (1 + TOLERANCE)), None) for s in sizes
    }
    return out


def sweep(scenario: Scenario, sizes: tuple[int, ...], replicates: int, seed: int) -> dict[str, Any]:
    """Every method at every pool size, the unlimited floors, and the crossovers."""
    rows = [simulate(scenario, m, s, replicates, seed) for s in sizes for m in METHODS]
    floors = {m: simulate(scenario, m, None, replicates, seed)["step_wall_s"] for m in METHODS}
    return {
        "parameters": {k: v for k, v in asdict(scenario).items() if k not in ("exec_samples_s", "sources")},
        "exec_s": {
            "mean": statistics.fmean(scenario.exec_samples_s),
            "max": max(scenario.exec_samples_s),
            "n_samples": len(scenario.exec_samples_s),
        },
        "sources": scenario.sources,
        "floors_step_wall_s": floors,
        "rows": rows,
        "crossovers": crossovers(rows, floors),
    }


def _show(name: str, result: dict[str, Any]) -> None:
    by = {(r["method"], r["sandboxes"]): r for r in result["rows"]}
    sizes = sorted({r["sandboxes"] for r in result["rows"]})
    wall_unit, scale = ("h", 3600) if result["floors_step_wall_s"]["real"] > 3600 else ("s", 1)
    rows = []
    for s in sizes:
        real, wmrl = by[("real", s)], by[("wmrl", s)]
        rows.append(
            {
                "sandboxes": s,
                f"real step ({wall_unit})": round(real["step_wall_s"] / scale, 2),
                f"wmrl step ({wall_unit})": round(wmrl["step_wall_s"] / scale, 2),
                "speed-up": round(real["step_wall_s"] / wmrl["step_wall_s"], 2),
                "real sandbox-h/step": round(real["sandbox_busy_s_per_step"] / 3600, 3),
                "wmrl sandbox-h/step": round(wmrl["sandbox_busy_s_per_step"] / 3600, 3),
                "real util": round(real["sandbox_utilization"], 2),
                "wmrl util": round(wmrl["sandbox_utilization"], 2),
                "real bound by": real["bottleneck"],
                "wmrl bound by": wmrl["bottleneck"],
            }
        )
    params = result["parameters"]
    table(
        f"{name}: {params['groups']}x{params['group_size']}x{params['turns']} turns, runs {result['exec_s']['mean']:.4g} s "
        f"mean, anchor fraction {params['anchor_fraction']}, {params['steps']} steps",
        rows,
    )
    cross, floors = result["crossovers"], result["floors_step_wall_s"]
    saving = by[("real", sizes[-1])]["sandbox_busy_s_per_step"] / by[("wmrl", sizes[-1])]["sandbox_busy_s_per_step"]
    matches = cross["real_matches_wmrl_from"]
    catch_up = (
        f"real GRPO is within {TOLERANCE:.0%} of WMRL's step time from {matches} sandboxes on (beyond that WMRL "
        f"saves sandbox compute, {saving:.1f}x, not time)"
        if matches is not None
        else f"real GRPO stays more than {TOLERANCE:.0%} slower than WMRL up to {sizes[-1]} sandboxes, and WMRL "
        f"uses {saving:.1f}x less sandbox compute"
    )
    note(
        f"{name}: floors (unlimited sandboxes) real {floors['real'] / scale:.4g} {wall_unit}, wmrl "
        f"{floors['wmrl'] / scale:.4g} {wall_unit} per step; real saturates at {cross['real_saturates_at']} sandboxes, "
        f"wmrl at {cross['wmrl_saturates_at']}; {catch_up}"
    )
    at = cross["real_saturates_at"] or sizes[-1]
    real, wmrl = by[("real", at)], by[("wmrl", at)]
    note(
        f"{name}: a {params['steps']}-step run on {at} sandboxes: real {real['run_wall_h']:.4g} h wall, "
        f"{real['run_sandbox_h']:.4g} sandbox-h busy; wmrl {wmrl['run_wall_h']:.4g} h wall, "
        f"{wmrl['run_sandbox_h']:.4g} sandbox-h busy. WMRL's world-model-only trajectories finish after "
        f"{wmrl['wm_only_trajectories_done_s'] / scale:.3g} {wall_unit}; the rest of its step waits on the anchor "
        "group's real runs"
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=["measured", "paper", "both"], default="both")
    parser.add_argument("--world-model", default="surrogate", help="measured: which world_models.json entry")
    parser.add_argument("--exec-s", type=float, help="every real run takes this many seconds (overrides samples)")
    parser.add_argument("--time-limit", type=float, help="cap on a run's seconds")
    parser.add_argument("--gen-s", type=float, help="generation seconds per turn")
    parser.add_argument("--wm-s", type=float, help="seconds per world-model call")
    parser.add_argument("--wm-slots", type=int, help="concurrent world-model calls the server serves")
    parser.add_argument("--train-s", type=float, help="seconds of the policy update per step")
    parser.add_argument("--anchor-fraction", type=float, help="target share of anchor groups (default 0.1)")
    parser.add_argument("--groups", type=int, help="groups per step (default 8)")
    parser.add_argument("--group-size", type=int, help="trajectories per group (default 8)")
    parser.add_argument("--turns", type=int, help="turns per trajectory (default 4)")
    parser.add_argument("--steps", type=int, help="steps per training run (default 100)")
    parser.add_argument(
        "--no-turn-barrier",
        dest="turn_barrier",
        action="store_false",
        help="trajectories run their turns independently (default: they meet after every turn, as in wmrl train)",
    )
    parser.add_argument("--max-sandboxes", type=int, default=1024, help="largest pool size (powers of 2 up to it)")
    parser.add_argument("--replicates", type=int, default=16, help="simulated steps per point (default 16)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="where the measured figures are read")
    parser.add_argument("--out", type=Path, default=OUT, help=f"results file (default {OUT})")
    return parser


_OVERRIDES = {
    "time_limit": "time_limit_s",
    "gen_s": "gen_s",
    "wm_s": "wm_s",
    "wm_slots": "wm_slots",
    "train_s": "train_s",
    "anchor_fraction": "anchor_fraction",
    "groups": "groups",
    "group_size": "group_size",
    "turns": "turns",
    "steps": "steps",
}


def _with_flags(scenario: Scenario, args: argparse.Namespace) -> Scenario:
    changes: dict[str, Any] = {}
    sources = dict(scenario.sources)
    for flag, name in _OVERRIDES.items():
        value = getattr(args, flag)
        if value is not None:
            changes[name] = value
            sources[name] = f"flag --{flag.replace('_', '-')}"
    if args.turn_barrier:
        sources["turn_barrier"] = "wmrl train: each turn is generated for all trajectories in one batch"
    else:
        changes["turn_barrier"] = False
        sources["turn_barrier"] = "flag --no-turn-barrier"
    if args.exec_s is not None:
        changes["exec_samples_s"] = (args.exec_s,)
        sources["exec_samples_s"] = "flag --exec-s"
    return replace(scenario, **changes, sources=sources)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the chosen scenarios, print their tables and crossovers, write the results file."""
    args = _parser().parse_args(argv)
    if args.max_sandboxes < 1 or args.replicates < 1:
        raise SystemExit("--max-sandboxes and --replicates must be at least 1")
    sizes = tuple(s for s in SANDBOXES if s <= args.max_sandboxes) or (1,)
    chosen = {"measured": ["measured"], "paper": ["paper"], "both": ["measured", "paper"]}[args.scenario]
    scenarios = {
        "measured": lambda: measured_scenario(args.results, args.world_model),
        "paper": paper_scenario,
    }
    report: dict[str, Any] = {
        "benchmark": "scaling_sim",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(["python", "benchmarks/scaling_sim.py", *(argv if argv is not None else sys.argv[1:])]),
        "machine": machine_facts(libraries=("numpy",)),
        "model": "list scheduling per step (benchmarks/_step_schedule.py), trajectories meeting after every turn "
        "unless turn_barrier is false; anchors from AnchorScheduler; means of "
        f"{args.replicates} simulated steps with common run durations across methods and pool sizes",
        "tolerance": TOLERANCE,
        "scenarios": {},
    }
    for name in chosen:
        scenario = _with_flags(scenarios[name](), args)
        result = sweep(scenario, sizes, args.replicates, args.seed)
        report["scenarios"][name] = result
        _show(name, result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    note(f"wrote {args.out}")
    return report


if __name__ == "__main__":
    main()
