"""HFPolicy on a tiny random Qwen3.5: sampling, re-scoring, updates, LoRA, state, and every bad input."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
import torch
from wmrl_agents.policies.hf import HFPolicy, HFPolicyConfig, HFTokens, LoRASettings
from wmrl_agents.policy import Episode, Policy, Sample, Turn

CONFIG = HFPolicyConfig(max_new_tokens=24, max_prompt_tokens=1024, score_batch_size=2, device="cpu", dtype="float32")
GOOD = "Here is my solution.\n```python\nimport os\nprint(os.environ['DATA_DIR'])\n```\n"


def _episode(prompt: str = "# Competition: telco churn\nPredict Churn.", turns: list[Turn] | None = None) -> Episode:
    # the policy reads only the prompt and the turns; the competition matters to the environment, not here
    return Episode(competition=None, prompt=prompt, turns=list(turns or []))  # type: ignore[arg-type]


@pytest.fixture
def policy(tiny_qwen35: Path) -> HFPolicy:
    return HFPolicy.from_pretrained(str(tiny_qwen35), CONFIG)


def _mean_logprob(policy: HFPolicy, episode: Episode, sample: Sample, reference: bool = False) -> float:
    with torch.no_grad():
        [scores] = policy.score_tokens([episode], [sample], reference=reference)
    return float(scores.logprobs.mean())


def test_generate_samples_each_episode_from_its_own_conversation(policy: HFPolicy, tiny_qwen35: Path) -> None:
    first = _episode()
    earlier = policy.sample_from_text(first, GOOD)
    second = _episode(turns=[Turn(earlier, "FEEDBACK: position score 0.5")])
    samples = policy.generate([first, second], temperature=1.0, top_p=1.0, seed=0)

    assert isinstance(policy, Policy) and policy.name == f"hf:{tiny_qwen35}"
    assert len(samples) == 2
    for sample in samples:
        assert isinstance(sample.tokens, HFTokens)
        assert sample.old_logprobs.shape == sample.tokens.reply.shape and not sample.old_logprobs.requires_grad
        assert torch.isfinite(sample.old_logprobs).all() and (sample.old_logprobs <= 0).all()
        assert (sample.code is None) == (sample.error is not None)
        if sample.code is None and int(sample.tokens.reply[-1]) not in policy.stop_ids:
            assert "cut at max_new_tokens=24" in sample.error
        assert sample.generation_s > 0
    prompts = [policy.tokenizer.decode(s.tokens.prompt) for s in samples]
    assert "FEEDBACK: position score 0.5" in prompts[1] and "print(os.environ['DATA_DIR'])" in prompts[1]
    assert "FEEDBACK" not in prompts[0]
    assert prompts[1].count("<|im_start|>assistant\n") == 2


def test_a_seed_repeats_a_sample_and_leaves_the_global_rng_alone(policy: HFPolicy) -> None:
    state = torch.get_rng_state()
    a, b, c = (policy.generate([_episode()], temperature=1.0, top_p=0.9, seed=s)[0] for s in (3, 3, 4))
    assert torch.equal(a.tokens.reply, b.tokens.reply) and a.text == b.text
    assert not torch.equal(a.tokens.reply[: c.tokens.reply.numel()], c.tokens.reply[: a.tokens.reply.numel()])
    assert torch.equal(torch.get_rng_state(), state)


def test_sampling_ignores_the_hub_generation_defaults(policy: HFPolicy) -> None:
    # the fixture's hub config says top_k=1 (every sample greedy) and repetition_penalty=1.1
    replies = {policy.generate([_episode()], temperature=1.0, top_p=1.0, seed=s)[0].text for s in range(4)}
    assert len(replies) > 1
    [greedy] = policy.generate([_episode()], temperature=0.0, top_p=1.0)
    ids = torch.cat([greedy.tokens.prompt, greedy.tokens.reply])[None]
    with torch.no_grad():
        logits = policy.model(input_ids=ids).logits[0, greedy.tokens.prompt.numel() - 1 : -1]
    assert torch.equal(logits.argmax(-1), greedy.tokens.reply), "greedy decoding is the model's own argmax"


def test_old_logprobs_equal_score_tokens_under_the_same_weights(policy: HFPolicy) -> None:
    episodes = [_episode(), _episode("# Competition: diamonds\n" + "Predict the cut. " * 30), _episode("short")]
    samples = policy.generate(episodes, temperature=1.0, top_p=1.0, seed=1)
    scores = policy.score_tokens(episodes, samples)
    vocab = len(policy.tokenizer)
    for sample, score in zip(samples, scores, strict=True):
        assert score.logprobs.requires_grad
        assert torch.allclose(score.logprobs.detach(), sample.old_logprobs, atol=1e-4)
        assert (score.entropy > 0).all() and (score.entropy <= math.log(vocab) + 1e-4).all()


def test_a_padded_row_scores_as_it_would_alone(policy: HFPolicy) -> None:
    episodes = [_episode(), _episode("# Competition: a much longer task prompt\n" + "More details. " * 40)]
    samples = [policy.sample_from_text(episodes[0], GOOD), policy.sample_from_text(episodes[1], "no code, sorry")]
    with torch.no_grad():
        together = policy.score_tokens(episodes, samples)
        alone = [policy.score_tokens([e], [s])[0] for e, s in zip(episodes, samples, strict=True)]
    for a, b in zip(together, alone, strict=True):
        assert torch.allclose(a.logprobs, b.logprobs, atol=1e-5)
        assert torch.allclose(a.entropy, b.entropy, atol=1e-5)


def _advantage_step(policy: HFPolicy, lr: float = 1e-2) -> tuple[Episode, Sample, Sample]:
    """One policy-gradient step that favours a good reply over a bad one; returns both."""
    episode = _episode()
    good, bad = policy.sample_from_text(episode, GOOD), policy.sample_from_text(episode, "I cannot help with that.")
    optimizer = torch.optim.Adam(policy.trainable_parameters(), lr=lr)
    scores = policy.score_tokens([episode, episode], [good, bad])
    loss = -(1.0 * scores[0].logprobs.mean() - 1.0 * scores[1].logprobs.mean()) / 2
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return episode, good, bad


def test_an_update_moves_the_policy_and_not_the_reference(policy: HFPolicy) -> None:
    episode = _episode()
    good, bad = policy.sample_from_text(episode, GOOD), policy.sample_from_text(episode, "I cannot help with that.")
    before = {n: p.detach().clone() for n, p in policy.model.named_parameters()}
    reference_before = _mean_logprob(policy, episode, good, reference=True)
    _, good_again, _ = _advantage_step(policy)

    assert torch.equal(good_again.tokens.reply, good.tokens.reply)
    assert _mean_logprob(policy, episode, good) > good.old_logprobs.mean().item()
    assert _mean_logprob(policy, episode, bad) < bad.old_logprobs.mean().item()
    assert any(not torch.equal(before[n], p) for n, p in policy.model.named_parameters())
    assert _mean_logprob(policy, episode, good, reference=True) == reference_before
    [reference] = policy.score_tokens([episode], [good], reference=True)
    assert not reference.logprobs.requires_grad


def test_lora_trains_only_the_adapter_and_scores_the_base_as_reference(tiny_qwen35: Path, policy: HFPolicy) -> None:
    lora = HFPolicy.from_pretrained(str(tiny_qwen35), dataclasses.replace(CONFIG, lora=LoRASettings(rank=4, alpha=8)))
    trainable = [n for n, p in lora.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    assert len(lora.trainable_parameters()) == len(trainable)
    frozen = {n: p.detach().clone() for n, p in lora.model.named_parameters() if not p.requires_grad}
    episode = _episode()
    sample = lora.sample_from_text(episode, GOOD)
    base_score = _mean_logprob(policy, episode, sample)
    assert _mean_logprob(lora, episode, sample) == pytest.approx(base_score, abs=1e-5), "B starts at 0"

    _advantage_step(lora)
    assert _mean_logprob(lora, episode, sample) > base_score + 1e-3
    assert all(torch.equal(frozen[n], p) for n, p in lora.model.named_parameters() if not p.requires_grad)
    assert _mean_logprob(lora, episode, sample, reference=True) == pytest.approx(base_score, abs=1e-5)


def test_gradient_checkpointing_scores_the_same_and_still_trains(tiny_qwen35: Path) -> None:
    policy = HFPolicy.from_pretrained(str(tiny_qwen35), dataclasses.replace(CONFIG, gradient_checkpointing=True))
    episode = _episode()
    sample = policy.sample_from_text(episode, GOOD)
    [scores] = policy.score_tokens([episode], [sample])
    assert torch.allclose(scores.logprobs.detach(), sample.old_logprobs, atol=1e-4)
    scores.logprobs.mean().backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in policy.trainable_parameters())


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("I would train a gradient boosting model on it.", "no ```python block in the reply"),
        ("```python\ndef solve(:\n    pass\n```", "fenced python block does not parse: SyntaxError"),
        ("", "empty generation"),
        ("   \n", "empty generation"),
    ],
)
def test_a_reply_without_a_usable_program_is_a_failed_turn_with_a_reason(
    policy: HFPolicy, reply: str, reason: str
) -> None:
    sample = policy.sample_from_text(_episode(), reply)
    assert sample.code is None and reason in sample.error
    assert sample.old_logprobs.shape == sample.tokens.reply.shape
    assert int(sample.tokens.reply[-1]) == policy.stop_ids[0]


def test_the_program_is_taken_from_the_reply_code_block(policy: HFPolicy) -> None:
    sample = policy.sample_from_text(_episode(), GOOD)
    assert sample.code == "import os\nprint(os.environ['DATA_DIR'])\n" and sample.error is None
    assert sample.text == GOOD


def test_a_model_path_that_cannot_hold_a_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        HFPolicy.from_pretrained(str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="holds no config.json"):
        HFPolicy.from_pretrained(str(tmp_path))
    (tmp_path / "adapter_config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="holds a LoRA adapter"):
        HFPolicy.from_pretrained(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="is a file"):
        HFPolicy.from_pretrained(str(tmp_path / "adapter_config.json"))


def test_a_hub_id_that_cannot_be_fetched_is_a_clear_error() -> None:
    # HF_HUB_OFFLINE=1 (conftest): the lookup fails at once instead of reaching for the network
    with pytest.raises(
        FileNotFoundError, match="(?s)could not load the tokenizer of 'wmrl-tests/no-such-model'.*hub id"
    ):
        HFPolicy.from_pretrained("wmrl-tests/no-such-model")


def test_a_tokenizer_without_a_chat_template_is_refused_with_the_fix(
    tiny_qwen35_without_template: Path, tiny_qwen35: Path
) -> None:
    with pytest.raises(ValueError, match=r"has no chat template.*HFPolicyConfig\(chat_template=\.\.\.\)"):
        HFPolicy.from_pretrained(str(tiny_qwen35_without_template), CONFIG)
    policy = HFPolicy.from_pretrained(
        str(tiny_qwen35_without_template),
        dataclasses.replace(CONFIG, chat_template=(tiny_qwen35 / "chat_template.jinja").read_text()),
    )
    [sample] = policy.generate([_episode()], temperature=1.0, top_p=1.0, seed=0)
    assert policy.tokenizer.decode(sample.tokens.prompt).endswith("<|im_start|>assistant\n")


def test_a_budget_beyond_the_model_context_is_refused(tiny_qwen35: Path) -> None:
    with pytest.raises(ValueError, match="exceeds the 16384-token context"):
        HFPolicy.from_pretrained(str(tiny_qwen35), HFPolicyConfig(max_prompt_tokens=16000, max_new_tokens=1000))


def test_bad_sampling_arguments_and_foreign_samples_are_refused(policy: HFPolicy) -> None:
    with pytest.raises(ValueError, match="temperature must be"):
        policy.generate([_episode()], temperature=-1.0, top_p=1.0)
    with pytest.raises(ValueError, match="top_p must be"):
        policy.generate([_episode()], temperature=1.0, top_p=0.0)
    foreign = Sample(text="x", code="x", tokens=[1, 2], old_logprobs=torch.zeros(2))
    with pytest.raises(TypeError, match="sample 0 was not made by an HFPolicy"):
        policy.score_tokens([_episode()], [foreign])
    with pytest.raises(ValueError, match="2 episodes but 1 samples"):
        policy.score_tokens([_episode(), _episode()], [foreign])


def test_the_state_round_trips_through_a_checkpoint_file(policy: HFPolicy, tmp_path: Path) -> None:
    episode, good, _ = _advantage_step(policy)
    torch.save({"policy": policy.state_dict(), "config": json.dumps(policy.config())}, tmp_path / "ckpt.pt")
    saved = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    restored = HFPolicy.from_config(json.loads(saved["config"]))
    assert _mean_logprob(restored, episode, good) != pytest.approx(_mean_logprob(policy, episode, good), abs=1e-4)
    restored.load_state_dict(saved["policy"])
    assert _mean_logprob(restored, episode, good) == pytest.approx(_mean_logprob(policy, episode, good), abs=1e-6)
    assert _mean_logprob(restored, episode, good, reference=True) == pytest.approx(
        _mean_logprob(policy, episode, good, reference=True), abs=1e-6
    ), "the reference stays the initial model, not the loaded weights"


def test_a_state_that_does_not_fit_is_refused(policy: HFPolicy, tiny_qwen35: Path) -> None:
    lora = HFPolicy.from_pretrained(str(tiny_qwen35), dataclasses.replace(CONFIG, lora=LoRASettings(rank=2)))
    with pytest.raises(ValueError, match="holds a LoRA adapter but this policy trains all weights"):
        policy.load_state_dict(lora.state_dict())
    with pytest.raises(ValueError, match="not an HFPolicy state"):
        policy.load_state_dict({"weights": {}})
    state = lora.state_dict()
    state["weights"] = {k + ".typo": v for k, v in state["weights"].items()}
    with pytest.raises(ValueError, match="do not fit .* missing .* unexpected"):
        lora.load_state_dict(state)


def test_save_pretrained_writes_a_model_that_loads_and_scores_the_same(tiny_qwen35: Path, tmp_path: Path) -> None:
    lora = HFPolicy.from_pretrained(str(tiny_qwen35), dataclasses.replace(CONFIG, lora=LoRASettings(rank=4)))
    episode, good, _ = _advantage_step(lora)
    folder = lora.save_pretrained(tmp_path / "merged")
    merged = HFPolicy.from_pretrained(str(folder), CONFIG)
    assert _mean_logprob(merged, episode, good) == pytest.approx(_mean_logprob(lora, episode, good), abs=1e-4)
    hub = json.loads((folder / "generation_config.json").read_text())
    assert hub["top_k"] == 1 and hub["repetition_penalty"] == 1.1, "the model's own defaults are kept for serving"
