"""What the runtime hooks say to the model: the reply shape and what each phase asks."""

from __future__ import annotations


def context_reply(event: str, text: str) -> dict:
    """Text added to the model's context (`hookSpecificOutput.additionalContext`)."""
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def phase_asks(lc, phase: str, agent: str) -> str:
    """What a mortality phase asks of the agent, in its lifecycle's own ways out (a sentence;
    empty when fresh)."""
    advice = lc.phase_advice(phase, agent)
    return f"{advice[0].upper()}{advice[1:]}." if advice else ""
