"""The reward server in process (FastAPI's TestClient runs the real app and lifespan)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from rewardsmith.cli.server import ServerConfig, create_app
from rewardsmith.graders import Grader, verify, weighted
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


@pytest.fixture(scope="module")
def roomy() -> Iterator[TestClient]:
    """The default body limit (8 MiB), so hostile bodies reach the JSON parser."""
    with TestClient(create_app(GRADER, ServerConfig(lanes=1, backend="inline"))) as c:
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
    # Its own request: under xdist this module's other tests may run in another worker.
    sample = {"id": "m", "completion": "A: 4", "reference": "A: 4"}
    assert client.post("/score", json={"samples": [sample]}).status_code == 200
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


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"samples": [{"id": "1", "completion": "x", "reference": ' + b"9" * 200_000 + b"}]}",
         "not valid JSON"),
        (b'{"samples": [{"id": "1", "completion": "x", "reference": NaN}]}', "NaN"),
        (b'{"samples": [{"id": "1", "completion": "x", "reference": Infinity}]}', "Infinity"),
        (b'{"samples": [{"id": "1", "completion": "x", "reference": -Infinity}]}', "Infinity"),
        (b'{"samples": [{"id": "1", "completion": "x", "reference": 1e999}]}', "overflows"),
        (b'{"samples": [{"id": "1", "completion": "x", "meta": ' + b'{"a": ' * 100
         + b"1" + b"}" * 100 + b"}]}", "nests deeper than 64"),
        (b"[" * 5000 + b"]" * 5000, "nests deeper than 64"),
        (b"[" * 200_000, "not valid JSON"),
        (b"\xff\xfe{}", "not valid JSON"),
    ],
)  # fmt: skip
def test_hostile_json_gets_a_400_not_a_500(roomy: TestClient, body: bytes, message: str) -> None:
    for endpoint in ("/score", "/get_reward"):
        reply = roomy.post(endpoint, content=body, headers={"content-type": "application/json"})
        assert reply.status_code == 400, reply.text
        assert message in reply.json()["error"]


def test_nan_references_are_refused_on_the_openrlhf_lane_too(client: TestClient) -> None:
    body = b'{"query": ["a"], "prompts": [""], "labels": [NaN]}'
    reply = client.post("/get_reward", content=body, headers={"content-type": "application/json"})
    assert reply.status_code == 400 and "NaN" in reply.json()["error"]


def test_get_reward_routes_by_the_task_in_the_label() -> None:
    grader = Grader(
        weighted(
            {
                "trivia": verify("exact_match", tasks=["trivia"]),
                "tagged": verify("format", tasks=["tagged"], patterns=("^A:",)),
            }
        )
    )
    labels = [
        json.dumps({"task": "trivia", "reference": "Paris"}),  # a JSON-text column
        {"task": "tagged", "reference": None},
        "Paris",  # no task in the label: the server's --task
    ]
    config = ServerConfig(lanes=1, backend="inline", task="trivia")
    with TestClient(create_app(grader, config)) as c:
        reply = c.post(
            "/get_reward",
            json={"query": ["Paris", "A: x", "Lyon"], "prompts": ["", "", ""], "labels": labels},
        ).json()
    assert reply["rewards"] == [2.0, 2.0, 0.0]  # one of two leaves applies: rescaled
    assert reply["extra_logs"]["trivia"] == [1.0, None, 0.0]  # the same keys for every sample
    assert reply["extra_logs"]["tagged"] == [None, 1.0, None]
