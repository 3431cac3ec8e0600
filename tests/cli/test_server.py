"""The reward server in process (FastAPI's TestClient runs the real app and lifespan)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from rewardsmith.cli.server import ServerConfig, create_app
from rewardsmith.graders import Grader, weighted
from rewardsmith.verifiers import create

GRADER = Grader(
    weighted({"correct": create("exact_match"), "fmt": create("format", patterns="^A:")})
)


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    config = ServerConfig(
        lanes=2, backend="inline", max_body_bytes=20_000, max_samples=8, token="s3cret"
    )
    with TestClient(create_app(GRADER, config)) as c:
        c.headers["Authorization"] = "Bearer s3cret"
        yield c


def test_native_score(client: TestClient) -> None:
    samples = [
        {"id": "1", "completion": "A: 4", "reference": "A: 4"},
        {"id": "2", "completion": "5", "reference": "A: 4"},
    ]
    reply = client.post("/score", json={"samples": samples})
    assert reply.status_code == 200
    values = [r["value"] for r in reply.json()["rewards"]]
    assert values == [2.0, 0.0]
    assert reply.json()["rewards"][1]["verdicts"]["fmt"]["failure"] == "format"


def test_openrlhf_contract(client: TestClient) -> None:
    body = {
        "query": ["Q: 2+2? A: 4", "Q: 3+3? A: 7"],
        "prompts": ["Q: 2+2? ", "Q: 3+3? "],
        "labels": ["A: 4", "A: 6"],
    }
    reply = client.post("/get_reward", json=body).json()
    assert set(reply) == {"rewards", "scores", "extra_logs"}
    assert reply["rewards"] == [2.0, 1.0] and reply["scores"] == reply["rewards"]
    assert reply["extra_logs"]["correct"] == [1.0, 0.0]
    assert reply["extra_logs"]["infra_failure"] == [0.0, 0.0]


@pytest.mark.parametrize(
    ("endpoint", "body", "status", "message"),
    [
        ("/score", b"{not json", 400, "not valid JSON"),
        ("/score", json.dumps({"samples": [{"id": "1"}]}).encode(), 422, "samples[0].completion"),
        ("/score", json.dumps({"rows": []}).encode(), 422, "expected"),
        (
            "/score",
            json.dumps({"samples": [{"id": str(i), "completion": "x"} for i in range(9)]}).encode(),
            413,
            "at most 8",
        ),
        ("/score", b'{"samples": ["' + b"x" * 30_000 + b'"]}', 413, "limit"),
        (
            "/get_reward",
            json.dumps({"query": ["a"], "prompts": []}).encode(),
            422,
            "as long as query",
        ),
    ],
)
def test_bad_requests_get_clear_errors(
    client: TestClient, endpoint: str, body: bytes, status: int, message: str
) -> None:
    reply = client.post(endpoint, content=body, headers={"content-type": "application/json"})
    assert reply.status_code == status and message in reply.json()["error"]


def test_token_is_required(client: TestClient) -> None:
    reply = client.post("/score", json={"samples": []}, headers={"Authorization": "Bearer nope"})
    assert reply.status_code == 401


def test_health_and_metrics(client: TestClient) -> None:
    assert client.get("/health").json()["status"] == "ok"
    text = client.get("/metrics").text
    assert 'rewardsmith_requests_total{endpoint="/score",status="200"}' in text
    assert "rewardsmith_request_seconds_bucket" in text


def test_server_equals_offline_scoring(client: TestClient, tmp_path: Path) -> None:
    """One path, three doors: the server's reward equals the grader's in process."""
    from rewardsmith.verifiers import Sample

    samples = [
        Sample(id=str(i), completion=c, reference="A: 1")
        for i, c in enumerate(["A: 1", "A: 2", "1"])
    ]
    offline = [r.value for r in GRADER.score(samples, None)]
    online = client.post("/score", json={"samples": [s.model_dump() for s in samples]}).json()
    assert [r["value"] for r in online["rewards"]] == offline
