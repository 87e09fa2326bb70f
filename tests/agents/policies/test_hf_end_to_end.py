"""The LLM path end to end on a tiny Qwen3.5: prompt, generation, code parsing, real execution, reward, update, resume.

The tiny model writes noise, so its own replies are failed but scored turns; a known-good
reply (the competition's baseline in a fenced block) joins the group through
`sample_from_text` so the sandbox, the grader and the GRPO advantage are real too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from wmrl_agents.policies.hf import HFPolicy, HFPolicyConfig
from wmrl_agents.policy import Episode, Turn
from wmrl_tasks.mledojo.pool.baselines import baseline_code
from wmrl_tasks.mledojo.prompt import feedback_text, task_prompt
from wmrl_tasks.mledojo.readers import read_competition

from wmrl_envs.rewards import ANCHOR, GroupScore, RealExecution, Rollout, group_advantages
from wmrl_envs.sandbox import Limits

TASK = "telco-customer-churn"
LIMITS = Limits(wall_time_s=120)
CLIP, KL_COEF = 0.2, 0.04


def _grpo_loss(policy: HFPolicy, episodes: list[Episode], samples: list, advantages: list[float]) -> torch.Tensor:
    """Clipped-ratio GRPO loss with the k3 KL estimator, per-sequence token mean (the trainer's default shape)."""
    scores = policy.score_tokens(episodes, samples)
    reference = policy.score_tokens(episodes, samples, reference=True)
    losses = []
    for sample, score, ref, advantage in zip(samples, scores, reference, advantages, strict=True):
        ratio = torch.exp(score.logprobs - sample.old_logprobs)
        surrogate = torch.minimum(ratio * advantage, torch.clamp(ratio, 1 - CLIP, 1 + CLIP) * advantage)
        log_ref_over_pi = ref.logprobs - score.logprobs
        kl = torch.exp(log_ref_over_pi) - log_ref_over_pi - 1
        losses.append((-surrogate + KL_COEF * kl).mean())
    return torch.stack(losses).mean()


@pytest.mark.slow
def test_a_group_is_generated_executed_rewarded_and_learned_from(
    pool_root: Path, tiny_qwen35: Path, tmp_path: Path
) -> None:
    competition = read_competition(pool_root / TASK)
    policy = HFPolicy.from_pretrained(
        str(tiny_qwen35), HFPolicyConfig(max_new_tokens=16, max_prompt_tokens=4096, device="cpu", dtype="float32")
    )
    episodes = [Episode(competition, task_prompt(competition, 0, 2, LIMITS)) for _ in range(3)]
    samples = policy.generate(episodes[:2], temperature=1.0, top_p=1.0, seed=0)
    samples.append(policy.sample_from_text(episodes[2], f"My solution:\n```python\n{baseline_code(TASK)}```\n"))
    assert samples[2].code == baseline_code(TASK)

    real = RealExecution(limits=LIMITS, workers=1)
    scored = real.score([Rollout(competition, s.code) for s in samples if s.code is not None])
    by_code = iter(scored)
    rewards = [0.0 if s.code is None else next(by_code).value for s in samples]  # no program: a failed turn, 0
    assert rewards[2] > 0.0, "the baseline runs in the sandbox and places on the leaderboard"
    [advantages] = group_advantages([GroupScore(rewards=rewards, source=ANCHOR)])
    assert advantages[2] == max(advantages) > 0

    optimizer = torch.optim.Adam(policy.trainable_parameters(), lr=1e-3)
    loss = _grpo_loss(policy, episodes, samples, advantages)
    assert torch.isfinite(loss)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        [after] = policy.score_tokens(episodes[2:], samples[2:])
    assert after.logprobs.mean() > samples[2].old_logprobs.mean(), "the best rollout became more likely"

    outcome = scored[-1].outcome
    feedback = feedback_text(competition.metric, 1, 2, outcome.execution, outcome.grade, rewards[2])
    episodes[2].turns.append(Turn(samples[2], feedback))
    [second] = policy.generate(episodes[2:], temperature=1.0, top_p=1.0, seed=1)
    assert "Position score" in policy.tokenizer.decode(second.tokens.prompt)

    torch.save({"policy": policy.state_dict(), "config": policy.config()}, tmp_path / "step-1.pt")
    checkpoint = torch.load(tmp_path / "step-1.pt", weights_only=True)
    resumed = HFPolicy.from_config(checkpoint["config"])
    resumed.load_state_dict(checkpoint["policy"])
    with torch.no_grad():
        [again] = resumed.score_tokens(episodes[2:], [second])
    assert torch.allclose(again.logprobs, second.old_logprobs, atol=1e-5)
