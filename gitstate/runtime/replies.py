"""What the runtime hooks say to the model: the reply shape and what each phase asks."""

from __future__ import annotations


def context_reply(event: str, text: str) -> dict:
    """Text added to the model's context (`hookSpecificOutput.additionalContext`)."""
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


PHASE_ASKS = {
    "fresh": "",
    "midlife": "Midlife: make sure your key decisions are written down.",
    "legacy": "Legacy: consolidate; fewer new reads, more writes. Write your freeze-state now "
              "(`gitstate freeze <you>` writes the template for data/freeze-states/).",
    "urgent": "Urgent: no new work. Externalize what you know, then freeze or die now "
              "(`gitstate freeze <you>`, or `gitstate bury <you> --summary ...`).",
}
