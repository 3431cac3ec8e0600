"""Rollout engines side by side: the HF engine against the vLLM engine on CPU.

The model is Qwen2.5-0.5B's architecture with random weights (`build_random_model`: 24
layers, hidden 896, a 151,936-token vocabulary, 494M parameters), built once into
build/bench/qwen2.5-0.5b-random. The work is one batch of 16 prompts of 32 random tokens,
128 new tokens each at temperature 1 (a random model almost never emits EOS, so both
engines generate all 16 x 128 tokens). Each engine runs in its own process: the HF engine
in a worker of the main venv (this script with --hf-worker), vLLM in its server in
.venv-vllm. Rounds interleave, HF then vLLM, so load changes hit both alike.

    .venv/bin/python benchmarks/rollout.py                 # 2 rounds; about 15 minutes here
    .venv/bin/python benchmarks/rollout.py --rounds 3 --vllm-dtypes float32,bfloat16

Reported: tokens/s (new tokens over wall time, measured by this process around each
request), each process's peak RSS (VmHWM, the kernel's high-water mark), the model's own
size and its KV cache for this batch, and the cost of pushing the weights to vLLM.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

from rewardsmith.trainer.engine import SamplingParams
from rewardsmith.trainer.random_model import QWEN2_5_0_5B, build_random_model

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "build" / "bench" / "qwen2.5-0.5b-random"
BATCH, PROMPT_TOKENS, NEW_TOKENS = 16, 32, 128


def peak_rss_gb(pid: int) -> float:
    """VmHWM of a process: its peak resident memory so far."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 2**20
    raise RuntimeError(f"no VmHWM for pid {pid}")


def rss_gb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 2**20
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def model_bytes(dtype_bytes: int) -> int:
    c = QWEN2_5_0_5B
    h, v, layers, inter = (
        c["hidden_size"],
        c["vocab_size"],
        c["num_hidden_layers"],
        c["intermediate_size"],
    )
    kv = h // c["num_attention_heads"] * c["num_key_value_heads"]
    per_layer = h * h * 2 + h * kv * 2 + h + kv * 2 + 3 * h * inter + 2 * h
    return (v * h + layers * per_layer + h) * dtype_bytes


def kv_cache_bytes(dtype_bytes: int) -> int:
    c = QWEN2_5_0_5B
    head = c["hidden_size"] // c["num_attention_heads"]
    per_token = 2 * c["num_hidden_layers"] * c["num_key_value_heads"] * head * dtype_bytes
    return per_token * BATCH * (PROMPT_TOKENS + NEW_TOKENS)


class HFWorker:
    """The HF engine in a child process of the main venv, driven over a pipe."""

    def __init__(self, model: Path, dtype: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--hf-worker", str(model), "--hf-dtype", dtype],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.loaded = self._call({"op": "ping"})

    def generate(self, prompts: list[list[int]], seeds: list[int], new: int = NEW_TOKENS) -> int:
        request = {"op": "generate", "prompts": prompts, "seeds": seeds, "new": new}
        return int(self._call(request)["tokens"])

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the HF worker died")
        return dict(json.loads(line))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def hf_worker(model: str, dtype: str) -> None:
    from rewardsmith.trainer.hf_engine import HFEngine

    engine = HFEngine.from_pretrained(model, dtype=dtype)
    for line in sys.stdin:
        request = json.loads(line)
        reply: dict[str, Any] = {"rss_gb": rss_gb(os.getpid())}
        if request["op"] == "generate":
            out = engine.generate(request["prompts"], sampling(request["seeds"], request["new"]))
            reply["tokens"] = sum(len(t) for t in out.token_ids)
        print(json.dumps(reply), flush=True)


def sampling(seeds: list[int], new_tokens: int = NEW_TOKENS) -> SamplingParams:
    return SamplingParams(new_tokens, 1.0, tuple(seeds), (QWEN2_5_0_5B["vocab_size"] - 293,))


def timed(pid: int, fn: Any, *args: Any) -> tuple[float, float, Any]:
    """Wall seconds, the CPU seconds process `pid` spent, and `fn(*args)`."""
    cpu, t0 = cpu_seconds(pid), time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, cpu_seconds(pid) - cpu, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--hf-dtype", default="float32")
    parser.add_argument("--vllm-dtypes", default="float32", help="comma-separated")
    parser.add_argument("--new-tokens", type=int, default=NEW_TOKENS, help="a smoke run: fewer")
    parser.add_argument("--hf-worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.hf_worker:
        hf_worker(args.hf_worker, args.hf_dtype)
        return
    from rewardsmith.trainer.vllm_engine import VLLMEngine

    if not (MODEL / "config.json").exists():
        build_random_model(MODEL)
    gen = torch.Generator().manual_seed(0)
    prompts = torch.randint(0, 151_000, (BATCH, PROMPT_TOKENS), generator=gen).tolist()
    seeds = list(range(BATCH))
    print(
        f"date {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}, "
        f"{os.cpu_count()} cores, load {Path('/proc/loadavg').read_text().split()[:3]}"
    )
    hf = HFWorker(MODEL, args.hf_dtype)
    phases: dict[str, dict[str, list[float]]] = {}
    peaks: dict[str, float] = {}
    dtypes = args.vllm_dtypes.split(",")
    for dtype in dtypes:
        rates = phases[dtype] = {"hf": [], "hf_cpu": [], "vllm": [], "vllm_cpu": []}
        with VLLMEngine(MODEL, dtype=dtype, max_model_len=512, kv_cache_gb=1.0) as vllm:
            vllm.generate(prompts[:2], SamplingParams(4, 1.0, (0, 1)))  # warm-up
            hf.generate(prompts[:2], seeds[:2], 4)
            for r in range(args.rounds):
                new = args.new_tokens
                seconds, cpu, tokens = timed(hf.proc.pid, hf.generate, prompts, seeds, new)
                rates["hf"].append(tokens / seconds)
                rates["hf_cpu"].append(tokens / cpu)
                seconds, cpu, out = timed(vllm.pid, vllm.generate, prompts, sampling(seeds, new))
                tokens = sum(map(len, out.token_ids))
                rates["vllm"].append(tokens / seconds)
                rates["vllm_cpu"].append(tokens / cpu)
                print(
                    f"round {r} (vLLM {dtype}): HF {rates['hf'][-1]:.2f} tok/s, "
                    f"{rates['hf_cpu'][-1]:.2f} tok/cpu-s; vLLM {rates['vllm'][-1]:.2f} tok/s, "
                    f"{rates['vllm_cpu'][-1]:.2f} tok/cpu-s; "
                    f"load {Path('/proc/loadavg').read_text().split()[0]}",
                    flush=True,
                )
            peaks[f"vLLM ({dtype})"] = peak_rss_gb(vllm.pid)
            if dtype == dtypes[-1]:
                peaks["HF"] = peak_rss_gb(hf.proc.pid)
                hf.close()
                syncs = push_weights(vllm)
    report(phases, peaks, syncs, args)


def push_weights(vllm: Any) -> list[Any]:
    """Push the full state dict to vLLM a few times (after the HF worker is gone: memory)."""
    from safetensors.torch import load_file

    state = load_file(str(MODEL / "model.safetensors"))
    syncs = []
    for _ in range(3):
        vllm.update_weights(state)
        syncs.append(vllm.last_sync)
    return syncs


def report(
    phases: dict[str, dict[str, list[float]]],
    peaks: dict[str, float],
    syncs: list[Any],
    args: Any,
) -> None:
    med = statistics.median
    print(f"\nload after: {Path('/proc/loadavg').read_text().split()[:3]}")
    print(
        "\n| engines (interleaved) | HF tok/s | vLLM tok/s | vLLM / HF | HF tok per CPU-s "
        "| vLLM tok per CPU-s | vLLM / HF per CPU-s |\n|---|---|---|---|---|---|---|"
    )
    for dtype, r in phases.items():
        print(
            f"| HF {args.hf_dtype} vs vLLM {dtype} | {', '.join(f'{x:.2f}' for x in r['hf'])} "
            f"| {', '.join(f'{x:.2f}' for x in r['vllm'])} | {med(r['vllm']) / med(r['hf']):.2f}x "
            f"| {med(r['hf_cpu']):.2f} | {med(r['vllm_cpu']):.2f} "
            f"| {med(r['vllm_cpu']) / med(r['hf_cpu']):.2f}x |"
        )
    hf_bytes = 2 if args.hf_dtype == "bfloat16" else 4
    own = (model_bytes(hf_bytes) + kv_cache_bytes(hf_bytes)) / 2**30
    print(
        f"\npeak RSS (VmHWM): HF {peaks['HF']:.2f} GiB; "
        + "; ".join(f"{k} {v:.2f} GiB" for k, v in peaks.items() if k != "HF")
    )
    print(
        f"model {model_bytes(hf_bytes) / 2**30:.2f} GiB + KV cache "
        f"{kv_cache_bytes(hf_bytes) / 2**20:.0f} MiB = {own:.2f} GiB; HF peak / that = "
        f"{peaks['HF'] / own:.2f} (goal <= 1.5)"
    )
    for s in syncs:
        print(
            f"weight push: {s.bytes / 2**30:.2f} GiB, write {s.write_s:.2f} s, "
            f"vLLM reload {s.load_s:.2f} s, total {s.total_s:.2f} s"
        )


if __name__ == "__main__":
    main()
