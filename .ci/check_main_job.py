"""Fail CI when the main job's real runs did not really run: any infrastructure error, or no valid run at all.

A sandbox that cannot import the solution stack turns every run into a failure worth 0 and the main job still
prints a table; this reads what `wmrl compare` wrote and says what went wrong instead.
Usage: python .ci/check_main_job.py COMPARE_JSON RUN_DIR
"""

import json
import sys
from pathlib import Path


def main(compare_json: str, run_dir: str) -> int:
    report = json.loads(Path(compare_json).read_text())
    problems = []
    evaluations = {"untrained policy": report["initial"]} | {m: r["heldout"] for m, r in report["methods"].items()}
    for name, evaluation in evaluations.items():
        if evaluation.get("infra_errors", 0):
            problems.append(f"held-out evaluation of {name}: {evaluation['infra_errors']} infrastructure error(s)")
    valid_rates = [e["summary"]["overall"]["valid_rate"] for e in evaluations.values()]
    real_turns = valid_turns = 0
    steps_file = Path(run_dir) / "real" / "steps.jsonl"
    for line in steps_file.read_text().splitlines():
        record = json.loads(line)
        rewards = record["rewards"]
        if rewards["unscored_turns"]:
            problems.append(f"real GRPO step {record['step']}: {rewards['unscored_turns']} unscored real run(s)")
        real_turns += rewards["turns"]
        valid_turns += round(rewards["valid_rate"] * rewards["turns"])
    if max(valid_rates) == 0 and valid_turns == 0:
        problems.append(f"every real run failed: 0 valid of {real_turns} training runs and every held-out evaluation")
    for problem in problems:
        print(f"ci: {problem}", file=sys.stderr)
    print(
        f"ci: main job checked: {valid_turns}/{real_turns} valid real training runs, held-out valid rates {valid_rates}"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
