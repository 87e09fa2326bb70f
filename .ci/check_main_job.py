"""Fail CI when the main job's real runs did not really run: any infrastructure error, or no valid run at all.

A sandbox that cannot import the solution stack turns every run into a failure worth 0 and the main job still
prints a table; this reads what `wmrl compare` wrote (one report per seed, in RUN_DIR/seed-N/) and says what
went wrong instead.
Usage: python .ci/check_main_job.py COMPARE_JSON RUN_DIR
"""

import json
import sys
from pathlib import Path


def main(compare_json: str, run_dir: str) -> int:
    report = json.loads(Path(compare_json).read_text())
    problems = []
    valid_rates = []
    real_turns = valid_turns = 0
    for seed, seed_report in report["per_seed"].items():
        evaluations = {"untrained policy": seed_report["initial"]}
        evaluations |= {m: r["heldout"] for m, r in seed_report["methods"].items()}
        for name, evaluation in evaluations.items():
            if evaluation.get("infra_errors", 0):
                problems.append(
                    f"seed {seed}, held-out evaluation of {name}: {evaluation['infra_errors']} infra error(s)"
                )
            valid_rates.append(evaluation["summary"]["overall"]["valid_rate"])
        steps_file = Path(run_dir) / f"seed-{seed}" / "real" / "steps.jsonl"
        for line in steps_file.read_text().splitlines():
            record = json.loads(line)
            rewards = record["rewards"]
            if rewards["unscored_turns"]:
                problems.append(
                    f"seed {seed}, real GRPO step {record['step']}: {rewards['unscored_turns']} unscored run(s)"
                )
            real_turns += rewards["turns"]
            valid_turns += round(rewards["valid_rate"] * rewards["turns"])
    if max(valid_rates) == 0 and valid_turns == 0:
        problems.append(f"every real run failed: 0 valid of {real_turns} training runs and every held-out evaluation")
    for problem in problems:
        print(f"ci: {problem}", file=sys.stderr)
    print(
        f"ci: main job checked ({len(report['per_seed'])} seed(s)): {valid_turns}/{real_turns} valid real training "
        f"runs, held-out valid rates {valid_rates}"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
