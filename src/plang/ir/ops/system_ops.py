"""System ops (`system.*`): synchronisation and chip queries."""

from __future__ import annotations
