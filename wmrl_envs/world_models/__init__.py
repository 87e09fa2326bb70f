"""World models: predictors of a solution's outcome without running it (see `base` for the contract)."""

from wmrl_envs.world_models.base import (
    BatchPredictor,
    PredictedStatus,
    Prediction,
    Predictor,
    PredictorError,
)
from wmrl_envs.world_models.code_features import FEATURE_NAMES, code_features
from wmrl_envs.world_models.llm import LLMWorldModel
from wmrl_envs.world_models.llm_backends import (
    ChatBackend,
    Completion,
    OpenAICompatibleBackend,
    TransformersBackend,
    VLLMBackend,
)
from wmrl_envs.world_models.llm_parse import LLMAnswer, parse_reply
from wmrl_envs.world_models.llm_prompt import (
    FewShotExample,
    FewShotPool,
    PromptBuilder,
    trim_code,
)
from wmrl_envs.world_models.proxy import CheapExecutionProxy, proxy_record
from wmrl_envs.world_models.proxy_split import (
    ProxyCompetition,
    ProxySplit,
    ProxyUnsupported,
    build_proxy_competition,
)
from wmrl_envs.world_models.surrogate import (
    HeldOutEntriesError,
    LearnedSurrogate,
    SurrogateConfig,
    SurrogateFileError,
    evaluate_surrogate,
)

__all__ = [
    "FEATURE_NAMES",
    "BatchPredictor",
    "ChatBackend",
    "CheapExecutionProxy",
    "Completion",
    "FewShotExample",
    "FewShotPool",
    "HeldOutEntriesError",
    "LLMAnswer",
    "LLMWorldModel",
    "LearnedSurrogate",
    "OpenAICompatibleBackend",
    "PredictedStatus",
    "Prediction",
    "Predictor",
    "PredictorError",
    "PromptBuilder",
    "ProxyCompetition",
    "ProxySplit",
    "ProxyUnsupported",
    "SurrogateConfig",
    "SurrogateFileError",
    "TransformersBackend",
    "VLLMBackend",
    "build_proxy_competition",
    "code_features",
    "evaluate_surrogate",
    "parse_reply",
    "proxy_record",
    "trim_code",
]
