"""One referee per table id on a broker.

Two referees publishing as the same table make its displays flip between two games, and the
second one's ``offline`` at exit would tell them the live table is gone. So before a referee
publishes, it asks the broker whether the table's retained ``status`` is ``online`` — a live
referee holds it so, and its Will turns it to ``offline`` the moment the broker sees it gone
(at once after a crash of the process, within 1.5 keepalives after a power cut).

The question is answered fast: after subscribing to the table's topics the checker publishes a
probe to a topic of its own; Mosquitto delivers the retained messages of a subscription before
later messages on the same connection, so once the probe comes back nothing retained is still
on its way. An unreachable broker is no answer (the referee never waits for the broker).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from dataclasses import dataclass

import aiomqtt

from cardtable.feed import BrokerAddress, Topics


@dataclass(frozen=True)
class LiveTable:
    """A referee that holds the table's status ``online``; ``session`` from its retained state."""

    table_id: str
    session: str | None


async def live_referee(broker: BrokerAddress, table_id: str,
                       timeout: float = 3.0) -> LiveTable | None:
    """The live referee of ``table_id`` on ``broker``, or None (none, or no broker to ask)."""
    topics = Topics(table_id)
    probe = f"{topics.base}/probe/{uuid.uuid4().hex}"
    status: str | None = None
    session: str | None = None
    try:
        async with asyncio.timeout(timeout), aiomqtt.Client(
                **broker.client_kwargs(), timeout=timeout) as client:
            await client.subscribe(topics.status, qos=1)
            await client.subscribe(topics.state, qos=1)
            await client.subscribe(probe, qos=1)
            await client.publish(probe, b"?", qos=1)
            async for message in client.messages:
                payload = message.payload if isinstance(message.payload, bytes) else b""
                if message.topic.matches(probe):
                    break
                if message.topic.matches(topics.status):
                    status = payload.decode("utf-8", "replace").strip()
                elif message.topic.matches(topics.state) and len(payload) <= MAX_STATE_BYTES:
                    # a state nested too deep for the parser is no state: skip it
                    with contextlib.suppress(ValueError, AttributeError, RecursionError):
                        found = json.loads(payload).get("session")
                        session = found if isinstance(found, str) else None
    except (aiomqtt.MqttError, TimeoutError, OSError):
        return None
    return LiveTable(table_id, session) if status == "online" else None


#: The largest retained state read for its session (the referee's own are a few kB).
MAX_STATE_BYTES = 1 << 20


def clash_message(live: LiveTable, broker: BrokerAddress) -> str:
    """Why a second referee of the same table does not start, and what to do."""
    return (f"table {live.table_id!r} is already refereed on {broker.url()} (its status is "
            f"online{', session ' + live.session if live.session else ''}): a second referee "
            "would mix two games on its displays. Stop that one, or give this table another "
            "[table] id. If no referee runs there any more, the broker's status is left over: "
            f"clear it with mosquitto_pub -r -n -t cardtable/{live.table_id}/status")
