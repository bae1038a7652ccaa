"""Misbehaviour on purpose (``--misbehave NAME``): placeholder while the broker is built."""

from __future__ import annotations

from collections.abc import Mapping

MISBEHAVIOURS: Mapping[str, str] = {}
