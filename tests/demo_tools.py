"""A small catalogue for grammar and prompt tests: domains the policy rules need, real-ish schemas.

Not collected by pytest (no ``test_`` prefix); imported by test_grammar_oracle.py and test_prompt.py.
"""

from __future__ import annotations

from eris_lab.catalog import Catalog, Tool

_NONE = {"type": "object", "properties": {}}


def _obj(props: dict, required=(), **extra) -> dict:
    return {"type": "object", "properties": props, "required": list(required), **extra}


TOOLS = [
    Tool(name="agenda:list", description="List the open reminders on the agenda.", parameters=_NONE,
         routing_hints=("what is on my agenda", "show my reminders")),
    Tool(name="agenda:remove", description="Remove a reminder from the agenda.",
         parameters=_obj({"id": {"type": "integer", "minimum": 1}}, ["id"], additionalProperties=False),
         routing_hints=("delete the reminder", "remove that task")),
    Tool(name="agenda:complete", description="Mark a reminder as done.",
         parameters=_obj({"id": {"type": "integer", "minimum": 1}}, ["id"])),
    Tool(name="mail:check", description="Check the inbox for new e-mail.",
         parameters=_obj({"folder": {"enum": ["inbox", "spam", "archive"]}, "unread_only": {"type": "boolean"}})),
    Tool(name="mail:delete", description="Delete an e-mail.", parameters=_obj({"message_id": {"type": "string"}}, ["message_id"])),
    Tool(name="mail:read", description="Read one e-mail.", parameters=_obj({"message_id": {"type": "string"}}, ["message_id"])),
    Tool(name="calendar:get", description="Show a calendar event.", parameters=_obj({"event_id": {"type": "string"}}, ["event_id"])),
    Tool(name="calendar:delete", description="Cancel a calendar event.",
         parameters=_obj({"event_id": {"type": "string"}, "notify": {"type": "boolean"}}, ["event_id"])),
    Tool(name="calendar:create", description="Schedule a calendar event.", parameters=_obj({
        "title": {"type": "string", "minLength": 1, "maxLength": 80},
        "date": {"type": "string", "format": "date"},
        "start": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
        "minutes": {"type": "integer", "minimum": 5, "maximum": 480},
        "attendees": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
    }, ["title", "date"], additionalProperties=False)),
    Tool(name="doc:query", description="Ask a question about a document.",
         parameters=_obj({"question": {"type": "string"}, "doc_id": {"type": ["string", "null"]}}, ["question"])),
    Tool(name="doc:read", description="Read a document.", parameters=_obj({"doc_id": {"type": "string"}}, ["doc_id"])),
    Tool(name="doc:delete", description="Delete a document.", parameters=_obj({"doc_id": {"type": "string"}}, ["doc_id"])),
    Tool(name="vault:write", description="Write a note into the vault.",
         parameters=_obj({"path": {"type": "string"}, "text": {"type": "string"}}, ["path", "text"])),
    Tool(name="web:fetch", description="Fetch a web page by URL.",
         parameters=_obj({"url": {"type": "string", "pattern": "^https?://"}}, ["url"], additionalProperties=False)),
    Tool(name="web:fetcher", description="Fetch many web pages (a name that extends another).",
         parameters=_obj({"urls": {"type": "array", "items": {"type": "string"}, "minItems": 1}}, ["urls"])),
    Tool(name="web:find", description="Find text on the fetched page.", parameters=_obj({"needle": {"type": "string"}}, ["needle"])),
    Tool(name="web:search", description="Search the web.",
         parameters=_obj({"query": {"type": "string"}, "top_k": {"type": "integer", "minimum": 1, "maximum": 10}}, ["query"])),
    Tool(name="weather:current", description="Current weather for a city.",
         parameters=_obj({"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}}, ["city"])),
    Tool(name="clock:timer", description="Start a countdown timer.",
         parameters=_obj({"seconds": {"type": "integer", "minimum": 1, "maximum": 86400}, "label": {"type": "string"}},
                         ["seconds"])),
    Tool(name="calculator", description="Evaluate an arithmetic expression.",
         parameters=_obj({"expression": {"type": "string", "maxLength": 200}}, ["expression"])),
]


def demo_catalog() -> Catalog:
    """The test catalogue (registry order as listed)."""
    return Catalog(TOOLS, source="tests/demo_tools.py")
