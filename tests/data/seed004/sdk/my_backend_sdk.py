"""A stand-in for the seed's ``my_backend_sdk``: a client that answers with a real PNG.

The image is a 2x2 PNG built here (zlib and struct, no imaging library), so the test can
check the file the provider saved is that image. Every call is appended, as JSON, to the file
named by ``MY_BACKEND_SDK_LOG`` when it is set, so a test in another process can see it.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import zlib


def png_bytes() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\xff" * 2 for _ in range(2))
    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


class Client:
    def __init__(self, api_key: str) -> None:
        self.api_key = api_key

    def _log(self, call: str, **fields: object) -> None:
        path = os.environ.get("MY_BACKEND_SDK_LOG")
        if path:
            with open(path, "a", encoding="utf-8") as log:
                log.write(json.dumps({"call": call, "api_key": self.api_key, **fields}) + "\n")

    def generate(self, prompt: str, model: str, aspect_ratio: str) -> dict[str, str]:
        self._log("generate", prompt=prompt, model=model, aspect_ratio=aspect_ratio)
        return {"image_b64": base64.b64encode(png_bytes()).decode("ascii")}

    def edit(self, prompt: str, model: str, image_urls: list[str]) -> dict[str, str]:
        self._log("edit", prompt=prompt, model=model, image_urls=image_urls)
        return {"image_url": "https://img.example.org/edited.png"}
