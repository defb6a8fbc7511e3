#!/usr/bin/env python3
"""Writes the small sample datasets the seed scenarios ship with (scenarios/data/).

They stand in for the files the seed experiments used (ShareGPT filtered to 16+ messages, and
KubeAI's chat message threads) so every scenario runs out of the box with --target sim. They
are made here from a fixed seed, not downloaded: same script, same bytes. Point a scenario's
load.dataset.path at the real file for a real run.
"""
import json
import pathlib
import random

WORDS = ("cache prefix replica router token latency batch kernel memory block hash queue "
         "request stream model prompt decode prefill throughput cluster node pod service "
         "gateway policy tenant session history answer question summary detail example "
         "reason value table chart metric budget window context system user assistant").split()


def sentence(rng, words):
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def paragraph(rng, low, high):
    words = rng.randint(low, high)
    parts = []
    while words > 0:
        n = min(words, rng.randint(8, 16))
        parts.append(sentence(rng, n))
        words -= n
    return " ".join(parts)


def sharegpt(rng, conversations):
    out = []
    for i in range(conversations):
        messages = []
        for _ in range(rng.randint(8, 10)):  # 16 to 20 messages
            messages.append({"from": "human", "value": paragraph(rng, 20, 60)})
            messages.append({"from": "gpt", "value": paragraph(rng, 30, 90)})
        out.append({"id": f"sample-{i:03d}", "conversations": messages})
    return out


def message_threads(rng, threads):
    out = []
    for i in range(threads):
        messages = [paragraph(rng, 60, 160) for _ in range(rng.randint(4, 8))]
        out.append({"id": f"thread-{i:03d}", "userMessages": messages})
    return out


def main():
    data = pathlib.Path(__file__).resolve().parent.parent / "scenarios" / "data"
    data.mkdir(parents=True, exist_ok=True)
    rng = random.Random(12345)
    (data / "sharegpt_16_messages_sample.json").write_text(
        json.dumps(sharegpt(rng, 40), indent=0) + "\n")
    (data / "message_threads_sample.json").write_text(
        json.dumps(message_threads(rng, 40), indent=0) + "\n")


if __name__ == "__main__":
    main()
